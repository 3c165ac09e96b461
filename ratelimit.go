package hoard

// RateLimit is a limit on the requests that share a key (one bot's overall
// sends, one of its chats, one account's requests): Rate per second with up
// to Burst at once. A Rate ≤ 0 is no limit.
type RateLimit struct {
	Key   string
	Rate  float64
	Burst int
}
