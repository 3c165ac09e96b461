package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// missingParts ends a delivery whose parts msgIDs did not arrive because
// they are no longer in the destination channel (the platform skips what
// it cannot forward): sending them again cannot help until the package is
// repaired, so the request ends FAILED at once, naming them, with the
// parts that did arrive counted, and the administrators get a MISSING_PART
// notification whose action repairs the package. The other packages of a
// batch are still delivered.
func (w *SendWorker) missingParts(ctx context.Context, d *store.BotDelivery, msgIDs []int) error {
	parts := partNumbers(d.DestMessageIDs, msgIDs)
	total := len(d.DestMessageIDs)
	what, verb := missingSubject(parts, total, d.FileName)
	c, _ := json.Marshal(map[string]any{"package_id": d.Request.PackageID, "missing_parts": parts, "dest_message_ids": msgIDs})
	if _, err := w.deps.DB.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyMissingPart, Severity: hoard.SeverityWarning,
		PackageID: d.Request.PackageID, Title: "Missing destination post: " + d.FileName,
		Message: fmt.Sprintf("%s %s no longer in the destination channel, so a delivery to a user failed. "+
			"Repair re-publishes the package.", what, verb),
		Context: c}); err != nil {
		return err
	}
	pronoun := "it"
	if verb == "are" {
		pronoun = "they"
	}
	msg := fmt.Sprintf("%s could not be delivered: %s %s missing from the archive channel. "+
		"An administrator has been told; send the package again once it is repaired.", what, pronoun, verb)
	if err := w.deps.DB.FailBotSend(ctx, d.Request.ID, total-len(parts), msg); err != nil {
		return err
	}
	w.deps.Metrics.BotDelivery(DeliveryMissingPart, 1)
	w.deps.Logger.Warn("bot: delivery failed, parts missing from the destination", "request", d.Request.ID,
		"package", d.Request.PackageID, "parts", parts)
	return nil
}

// partNumbers returns the part numbers (1-based positions in dest) of the
// message ids msgIDs, ascending.
func partNumbers(dest []int64, msgIDs []int) []int {
	var out []int
	for i, id := range dest {
		if slices.Contains(msgIDs, int(id)) {
			out = append(out, i+1)
		}
	}
	return out
}

// missingSubject names the missing parts of a package of total parts and
// the verb that goes with them: "Part 2 of 3 of X.zip" is, "Parts 2 and 5
// of 7 of X.zip" are; a single-file package is its name.
func missingSubject(parts []int, total int, name string) (string, string) {
	if total <= 1 || len(parts) == 0 {
		return name, "is"
	}
	nums := make([]string, len(parts))
	for i, p := range parts {
		nums[i] = strconv.Itoa(p)
	}
	if len(nums) == 1 {
		return fmt.Sprintf("Part %s of %d of %s", nums[0], total, name), "is"
	}
	return fmt.Sprintf("Parts %s and %s of %d of %s", strings.Join(nums[:len(nums)-1], ", "), nums[len(nums)-1], total, name), "are"
}
