package hoard

import "strconv"

// PostURL returns the address of a message of channel c in the platform's
// web client: https://t.me/<username>/<message> for a public channel,
// https://t.me/c/<id>/<message> for a private one (it opens for members
// only), with the forum topic before the message when topicID is set. It
// returns "" when c is nil or messageID is not positive.
func PostURL(c *Channel, messageID, topicID int64) string {
	if c == nil || messageID <= 0 {
		return ""
	}
	u := "https://t.me/"
	if c.Username != "" {
		u += c.Username + "/"
	} else if c.PlatformID > 0 {
		u += "c/" + strconv.FormatInt(c.PlatformID, 10) + "/"
	} else {
		return ""
	}
	if topicID > 0 {
		u += strconv.FormatInt(topicID, 10) + "/"
	}
	return u + strconv.FormatInt(messageID, 10)
}
