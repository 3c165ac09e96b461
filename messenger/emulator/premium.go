package emulator

import "fmt"

// SetPremium starts or ends a user's Premium subscription, as happens on the
// platform at any time: users.getUsers reports it from now on, and uploads
// follow its part cap (FILE_PARTS_INVALID above 4,000 parts without
// Premium). The change lasts while the emulator runs (a restart reads the
// seed again).
func (e *Emulator) SetPremium(userID int64, premium bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	u := e.users[userID]
	if u == nil {
		return fmt.Errorf("emulator: no user %d", userID)
	}
	u.premium = premium
	return nil
}

// SetPartCaps scales the platform's upload part caps (4,000 parts of 512
// KiB, 8,000 with Premium) down to regular and premium parts, so that a
// test can meet the caps with megabytes instead of gigabytes; 0 keeps the
// platform's cap.
func (e *Emulator) SetPartCaps(regular, premium int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.partCaps = [2]int{regular, premium}
}
