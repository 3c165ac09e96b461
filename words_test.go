package hoard

import "testing"

// TestEveryEnumHasWords: no stored name reaches a page as it is.
func TestEveryEnumHasWords(t *testing.T) {
	for _, s := range GroupingSources {
		if w := s.Words(); w == "grouped" || w == string(s) {
			t.Errorf("grouping source %s has no words of its own: %q", s, w)
		}
	}
	for _, s := range []DeliveryStatus{DeliveryNone, DeliveryPartial, DeliveryDone} {
		if s.Words() == string(s) {
			t.Errorf("delivery status %s has no words", s)
		}
	}
	for _, s := range []PaymentStatus{PaymentPaid, PaymentUnpaid} {
		if s.Words() == string(s) {
			t.Errorf("payment status %s has no words", s)
		}
	}
	rules := []struct {
		r    GroupingRule
		want string
	}{
		{GroupingRule{SignalType: RulePrefix, Pattern: "Dragon"}, "file names starting with “Dragon”"},
		{GroupingRule{SignalType: RuleCreator, Pattern: "Dragon Forge"}, "packages by “Dragon Forge”"},
	}
	for _, tt := range rules {
		if got := tt.r.Words(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.r, got, tt.want)
		}
	}
}
