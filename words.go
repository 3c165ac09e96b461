package hoard

// The words people read for the enumerations the catalog shows (pages and
// bot replies), instead of their stored names.

// Words says how a group was formed: "grouped by time" for AUTO_TIME.
func (s GroupingSource) Words() string {
	switch s {
	case GroupAlbum:
		return "posted as one album"
	case GroupManual:
		return "grouped by hand"
	case GroupAutoTime:
		return "grouped by time (posted close together)"
	case GroupAutoPattern:
		return "grouped by a pattern in their names"
	case GroupAutoCreator:
		return "grouped by creator"
	case GroupAutoReply:
		return "grouped by replies to one post"
	case GroupAutoZip:
		return "grouped by a shared folder"
	case GroupAutoCaption:
		return "grouped by caption"
	}
	return "grouped"
}

// Words says what a rule matches: `file names starting with “Dragon”`.
func (r GroupingRule) Words() string {
	switch r.SignalType {
	case RulePrefix:
		return "file names starting with “" + r.Pattern + "”"
	case RuleCreator:
		return "packages by “" + r.Pattern + "”"
	}
	return string(r.SignalType) + " “" + r.Pattern + "”"
}

// Words is the delivery status in words: "Not delivered".
func (s DeliveryStatus) Words() string {
	switch s {
	case DeliveryNone:
		return "Not delivered"
	case DeliveryPartial:
		return "Partly delivered"
	case DeliveryDone:
		return "Delivered"
	}
	return string(s)
}

// Words is the payment status in words: "Unpaid".
func (s PaymentStatus) Words() string {
	switch s {
	case PaymentPaid:
		return "Paid"
	case PaymentUnpaid:
		return "Unpaid"
	}
	return string(s)
}
