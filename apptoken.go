package hoard

import "time"

// AppToken lets a program act as its user on the read-only API (GET routes
// that accept app tokens) with `Authorization: Bearer <secret>`. Only the
// SHA-256 of the secret is stored; the secret is shown once, when the
// token is made. Prefix (the secret's first characters) is no secret: it
// tells a user's tokens apart on the settings page.
type AppToken struct {
	ID         int64
	UserID     int64
	Name       string
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}
