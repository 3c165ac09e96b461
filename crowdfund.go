package hoard

import "time"

// DeliveryStatus is how much of a crowdfunded reward has arrived.
type DeliveryStatus string

// Delivery states.
const (
	DeliveryNone    DeliveryStatus = "NOT_DELIVERED"
	DeliveryPartial DeliveryStatus = "PARTIAL"
	DeliveryDone    DeliveryStatus = "DELIVERED"
)

// PaymentStatus says whether a crowdfunded reward is paid.
type PaymentStatus string

// Payment states.
const (
	PaymentPaid   PaymentStatus = "PAID"
	PaymentUnpaid PaymentStatus = "UNPAID"
)

// CrowdfundHost is a crowdfunding platform or creator shop.
type CrowdfundHost struct {
	ID int64
	// UserID is the user who typed it: hosts are private to their user,
	// like their records.
	UserID    int64
	Name      string
	URL       string
	CreatedAt time.Time
}

// Crowdfund is one user's record of a crowdfunded reward, linkable to the
// packages that deliver it. Records are private to their user.
type Crowdfund struct {
	ID             int64
	UserID         int64
	HostID         int64
	HostName       string
	Name           string
	Link           string
	FilesURL       string
	DeliveryStatus DeliveryStatus
	PaymentStatus  PaymentStatus
	Notes          string
	PackageCount   int
	CreatedAt      time.Time
	UpdatedAt      time.Time
}
