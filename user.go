package hoard

import "time"

// User is a person who signs in to the web application.
type User struct {
	ID           int64
	Email        string
	PasswordHash string // argon2id PHC string; never leaves the server
	Role         Role
	DisplayName  string
	InviteCodeID int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
	LastLoginAt  *time.Time
}

// IsAdmin reports whether the user has the ADMIN role.
func (u *User) IsAdmin() bool { return u != nil && u.Role == RoleAdmin }

// InviteCode lets people register. Registration is refused once UseCount
// reaches MaxUses or after ExpiresAt.
type InviteCode struct {
	ID        int64
	Code      string
	Role      Role
	MaxUses   int
	UseCount  int
	ExpiresAt *time.Time
	Note      string
	CreatedBy int64
	CreatedAt time.Time
	// UsedBy lists the emails of users who registered with the code
	// (filled by ListInvites).
	UsedBy []string
}

// Usable reports whether the code can still register someone at now.
func (c *InviteCode) Usable(now time.Time) bool {
	return c.UseCount < c.MaxUses && (c.ExpiresAt == nil || now.Before(*c.ExpiresAt))
}

// Session is a signed-in browser. ID is the SHA-256 of the cookie token, so
// the table never holds a usable token.
type Session struct {
	ID         string
	UserID     int64
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
	UserAgent  string
	RemoteAddr string
	// UserLinked reports whether the user had a messenger link when the
	// session was looked up (store.DB.FindSessionUser), so that the pages
	// with send buttons need no query of their own.
	UserLinked bool
}

// HasPassword reports whether the user can sign in with a password: a user
// who signed up through an identity provider has none until they set one.
func (u *User) HasPassword() bool { return u != nil && u.PasswordHash != "" }

// Identity is a user's account at an identity provider (OpenID Connect,
// GitHub), linked to their hoard account: signing in there signs them in
// here. Issuer and Subject name the provider's account for good; Provider is
// the configuration's key ("oidc", "github"), and a user links at most one
// account per provider.
type Identity struct {
	ID         int64
	UserID     int64
	Provider   string
	Issuer     string
	Subject    string
	Email      string // what the provider last said the account's e-mail is
	CreatedAt  time.Time
	LastUsedAt *time.Time
}
