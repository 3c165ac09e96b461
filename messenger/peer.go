package messenger

import "github.com/hoard/hoard"

// PeerOf is the platform's view of a catalogued channel through one
// account's map of it (the access hash is that account's).
func PeerOf(ch *hoard.Channel, m *hoard.ChannelMap) Channel {
	return Channel{ID: ch.PlatformID, AccessHash: m.AccessHash, Title: ch.Title, Username: ch.Username,
		Forum: ch.IsForum, Protected: ch.IsProtected, Member: true}
}
