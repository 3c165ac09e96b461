package bot

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store"
)

// Search paging.
const (
	searchPageSize = 8
	// searchTTL is how long a search's buttons work.
	searchTTL = 24 * time.Hour
	// maxQuery bounds a search's text in characters: the web's bound of
	// a parameter, which checkArgs applies to every argument.
	maxQuery = hoard.MaxParamLen
)

func newToken() string {
	b := make([]byte, tokenLen*6/8)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// search answers /search: the first page of the same search the web
// catalog runs (store.SearchPackages), with Prev/Next buttons whose state
// (query, cursors) stays on the server behind a short token.
func (s *Service) search(ctx context.Context, tx *store.DB, u linkedUser, args string) (*reply, error) {
	if args == "" { // checkArgs bounded it
		return new(reply).say("Tell me what to look for: /search dragon"), nil
	}
	p := &store.BotSearchPage{Token: newToken(), ChatID: u.chat, Query: args, Cursors: []*store.SearchCursor{nil}}
	msg, err := s.searchPage(ctx, tx, p, 0)
	if err != nil {
		return nil, err
	}
	if len(p.Cursors) > 1 { // there is a next page: keep the state for its button
		// Outside the answer's transaction: the user may press Next as soon
		// as the page arrives, before that transaction commits. An answer
		// rolled back leaves the row to expire.
		if err := s.deps.DB.CreateBotSearchPage(ctx, *p, searchTTL); err != nil {
			return nil, err
		}
	}
	return &reply{messages: []messenger.OutgoingMessage{msg}}, nil
}

// pageQuery is the search of page n of p (it shows no total).
func pageQuery(p *store.BotSearchPage, n int) store.SearchQuery {
	return store.SearchQuery{Text: p.Query, After: p.Cursors[n], Limit: searchPageSize, NoEstimate: true}
}

// searchPage renders page n of a search and records the cursor of page
// n+1 in p when there is one.
func (s *Service) searchPage(ctx context.Context, tx *store.DB, p *store.BotSearchPage, n int) (messenger.OutgoingMessage, error) {
	res, err := tx.SearchPackages(ctx, pageQuery(p, n))
	if err != nil {
		return messenger.OutgoingMessage{}, err
	}
	if res.Next != nil && len(p.Cursors) == n+1 {
		p.Cursors = append(p.Cursors, res.Next)
	}
	if len(res.Hits) == 0 {
		if n == 0 {
			return messenger.OutgoingMessage{HTML: "No packages match “" + text(p.Query) + "”."}, nil
		}
		return messenger.OutgoingMessage{HTML: "No more packages match “" + text(p.Query) + "”."}, nil
	}
	lines := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		lines[i] = fmt.Sprintf("%d. %s", n*searchPageSize+i+1, packageLine(h.Package)) + filesLine(h)
	}
	head := fmt.Sprintf("🔍 <b>%s</b> — page %d\n", text(cutText(p.Query, 60)), n+1)
	msg := messenger.OutgoingMessage{HTML: fitLines(head, lines, "", messenger.MaxMessageText)}
	var row []messenger.Button
	if n > 0 {
		row = append(row, messenger.Button{Text: "« Prev", Data: pageData(p.Token, n-1)})
	}
	if res.Next != nil {
		row = append(row, messenger.Button{Text: "Next »", Data: pageData(p.Token, n+1)})
	}
	if len(row) > 0 {
		msg.Keyboard = messenger.Keyboard{row}
	}
	return msg, nil
}

// packageLine is a package in a list: name, creator, size and its command.
func packageLine(p hoard.Package) string {
	var b strings.Builder
	b.WriteString("<b>" + text(cutText(p.FileName, 120)) + "</b>")
	if p.Creator != "" {
		b.WriteString(" by " + text(cutText(p.Creator, 60)))
	}
	fmt.Fprintf(&b, " · %s · /package %d", size(p.FileSize), p.ID)
	return b.String()
}

// filesLine names the files of a hit whose paths hold the search's text
// ("\n   3 files match: Hoard Set/chest.stl, …"), or is empty.
func filesLine(h store.SearchHit) string {
	if h.FilesMatched == 0 {
		return ""
	}
	paths := make([]string, len(h.MatchedPaths))
	for i, p := range h.MatchedPaths {
		paths[i] = text(cutText(p, 80))
	}
	more := ""
	if h.FilesMatched > len(h.MatchedPaths) {
		more = ", …"
	}
	noun := "files match"
	if h.FilesMatched == 1 {
		noun = "file matches"
	}
	return fmt.Sprintf("\n   %d %s: %s%s", h.FilesMatched, noun, strings.Join(paths, ", "), more)
}

// Bounds of /latest.
const (
	latestDefault = 10
	latestMax     = 20
)

// latest answers /latest [n]: the newest packages (the catalog search
// without text).
func (s *Service) latest(ctx context.Context, tx *store.DB, _ linkedUser, args string) (*reply, error) {
	n := latestDefault
	if args != "" {
		id, ok := parseID(args)
		if !ok {
			return new(reply).say(fmt.Sprintf("Say how many, from 1 to %d: /latest 10", latestMax)), nil
		}
		n = int(min(id, latestMax))
	}
	res, err := tx.SearchPackages(ctx, store.SearchQuery{Limit: n, NoEstimate: true})
	if err != nil {
		return nil, err
	}
	if len(res.Hits) == 0 {
		return new(reply).say("The catalog is empty so far."), nil
	}
	lines := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		lines[i] = fmt.Sprintf("%d. %s", i+1, packageLine(h.Package))
	}
	head := fmt.Sprintf("🆕 <b>The %s</b>\n", plural(len(lines), "newest package"))
	if len(lines) == 1 {
		head = "🆕 <b>The newest package</b>\n"
	}
	return new(reply).say(fitLines(head, lines, "", messenger.MaxMessageText)), nil
}

// showPackage answers /package N: the preview as a photo when there is
// one, with the package's details as its caption and a Send button.
func (s *Service) showPackage(ctx context.Context, tx *store.DB, _ linkedUser, args string) (*reply, error) {
	id, ok := parseID(args)
	if !ok {
		return new(reply).say("Say which package: /package 123 (the numbers /search and /latest show)."), nil
	}
	p, err := tx.FindPackageByID(ctx, id)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return new(reply).say(fmt.Sprintf("There is no package %d.", id)), nil
	} else if err != nil {
		return nil, err
	}
	var group *hoard.PackageGroup
	if p.PackageGroupID != 0 {
		if group, err = tx.FindGroupByID(ctx, p.PackageGroupID); err != nil {
			return nil, err
		}
	}
	msg := messenger.OutgoingMessage{HTML: packageCaption(p, group)}
	if len(p.DestMessageIDs) > 0 {
		msg.Keyboard = messenger.Keyboard{{{Text: "📥 Send it to me", Data: idData(dataSend, p.ID)}}}
	}
	if p.HasPreview {
		photo, err := tx.FindPackagePreview(ctx, p.ID)
		if err == nil {
			msg.Photo, msg.PhotoName = photo, "preview.jpg"
		} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
			return nil, err
		}
	}
	return &reply{messages: []messenger.OutgoingMessage{msg}}, nil
}

// packageCaption describes a package within the caption limit.
func packageCaption(p *hoard.Package, g *hoard.PackageGroup) string {
	var lines []string
	lines = append(lines, "📦 <b>"+text(cutText(p.FileName, 300))+"</b>")
	if p.Creator != "" {
		lines = append(lines, "👤 "+text(cutText(p.Creator, 100)))
	}
	details := fmt.Sprintf("💾 %s · %s · %s", size(p.FileSize), p.ArchiveType, plural(max(p.PartCount, 1), "part"))
	if p.FileCount > 0 {
		details += " · " + plural(p.FileCount, "file")
	}
	lines = append(lines, details)
	if len(p.Tags) > 0 {
		tags := make([]string, len(p.Tags))
		for i, t := range p.Tags {
			tags[i] = text(t)
		}
		lines = append(lines, "🏷 "+cutText(strings.Join(tags, ", "), 200))
	}
	if g != nil {
		lines = append(lines, fmt.Sprintf("🗂 %s — /group %d", text(cutText(g.Name, 100)), g.ID))
	}
	if len(p.DestMessageIDs) == 0 {
		lines = append(lines, "<i>Not published yet: it cannot be sent.</i>")
	}
	return fitLines("", lines, "", messenger.MaxCaption)
}

// Bounds of /group lists.
const (
	groupMembersShown = 20
	groupMatchesShown = 8
)

// group answers /group N (a group and its packages) and /group NAME
// (groups whose names match).
func (s *Service) group(ctx context.Context, tx *store.DB, _ linkedUser, args string) (*reply, error) {
	if args == "" {
		return new(reply).say("Say which group: /group 12, or find groups by name: /group dragon"), nil
	}
	if id, ok := parseID(args); ok {
		return s.groupDetails(ctx, tx, id)
	}
	groups, err := tx.SearchGroupsByName(ctx, cutText(args, maxQuery), groupMatchesShown)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return new(reply).say("No group names match “" + text(args) + "”."), nil
	}
	lines := make([]string, len(groups))
	for i, g := range groups {
		lines[i] = fmt.Sprintf("• <b>%s</b> — %s — /group %d", text(cutText(g.Name, 120)), plural(g.MemberCount, "package"), g.ID)
	}
	return new(reply).say(fitLines("🗂 <b>Groups matching “"+text(cutText(args, 60))+"”</b>\n", lines, "", messenger.MaxMessageText)), nil
}

func (s *Service) groupDetails(ctx context.Context, tx *store.DB, id int64) (*reply, error) {
	g, err := tx.FindGroupByID(ctx, id)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return new(reply).say(fmt.Sprintf("There is no group %d.", id)), nil
	} else if err != nil {
		return nil, err
	}
	members, _, err := tx.ListPackages(ctx, store.PackageFilter{GroupID: g.ID}, nil, groupMembersShown)
	if err != nil {
		return nil, err
	}
	lines := make([]string, len(members))
	for i, p := range members {
		lines[i] = "• " + packageLine(p)
	}
	if g.MemberCount > len(members) {
		lines = append(lines, moreNote(g.MemberCount-len(members)))
	}
	head := fmt.Sprintf("🗂 <b>%s</b> — %s\n", text(cutText(g.Name, 200)), plural(g.MemberCount, "package"))
	msg := messenger.OutgoingMessage{HTML: fitLines(head, lines, fmt.Sprintf("\nSend them all with /sendgroup %d", g.ID),
		messenger.MaxMessageText)}
	if g.MemberCount > 0 {
		msg.Keyboard = messenger.Keyboard{{{Text: fmt.Sprintf("📥 Send all %d to me", g.MemberCount), Data: idData(dataSendGroup, g.ID)}}}
	}
	return &reply{messages: []messenger.OutgoingMessage{msg}}, nil
}

// sendGroup answers /sendgroup N: every package of the group, in order,
// after one header message.
func (s *Service) sendGroup(ctx context.Context, tx *store.DB, u linkedUser, args string) (*reply, error) {
	id, ok := parseID(args)
	if !ok {
		return new(reply).say("Say which group: /sendgroup 12 (the numbers /group shows)."), nil
	}
	said, err := s.queueGroup(ctx, tx, u.link, id)
	if err != nil {
		return nil, err
	}
	return new(reply).say(said), nil
}

// queueGroup queues a group's packages for the linked account and says
// what it queued.
func (s *Service) queueGroup(ctx context.Context, tx *store.DB, link *hoard.MessengerLink, groupID int64) (string, error) {
	g, err := tx.FindGroupByID(ctx, groupID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return fmt.Sprintf("There is no group %d.", groupID), nil
	} else if err != nil {
		return "", err
	}
	ids, err := tx.ListGroupDeliveryOrder(ctx, g.ID)
	if err != nil {
		return "", err
	}
	reqs, err := tx.QueueBotSends(ctx, store.SendOrder{UserID: link.UserID, PlatformUserID: link.PlatformUserID,
		PackageIDs: ids, Title: "🗂 " + g.Name}, queue.InsertBotSends(ctx, s.queue))
	if err != nil {
		return "", err
	}
	if len(reqs) == 0 {
		return "Nothing to send from “" + text(g.Name) + "”: its packages are not published yet, or already on their way.", nil
	}
	return fmt.Sprintf("📬 Sending %s of “%s”, in order.", plural(len(reqs), "package"), text(g.Name)), nil
}

// queuePackage queues one package for the linked account and says what it
// queued (a short notice).
func (s *Service) queuePackage(ctx context.Context, tx *store.DB, link *hoard.MessengerLink, packageID int64) (string, error) {
	reqs, err := tx.QueueBotSends(ctx, store.SendOrder{UserID: link.UserID, PlatformUserID: link.PlatformUserID,
		PackageIDs: []int64{packageID}}, queue.InsertBotSends(ctx, s.queue))
	if err != nil {
		return "", err
	}
	if len(reqs) == 0 {
		return "Nothing to send: the package is not published yet, or already on its way.", nil
	}
	return "📬 On its way.", nil
}

// button answers a button press: a search page, or a send.
func (s *Service) button(ctx context.Context, tx *store.DB, q messenger.CallbackQuery) (*reply, error) {
	s.deps.Metrics.BotCommand("button")
	cb, err := parseCallback(q.Data)
	if err != nil {
		return &reply{notice: "This button is out of date."}, nil
	}
	if cb.kind == dataPage {
		return s.turnPage(ctx, tx, q, cb)
	}
	link, err := tx.FindMessengerLinkByPlatformUser(ctx, q.UserID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return &reply{notice: "Link this chat to your hoard account first: send /start."}, nil
	} else if err != nil {
		return nil, err
	}
	var notice string
	if cb.kind == dataSend {
		notice, err = s.queuePackage(ctx, tx, link, cb.id)
	} else {
		notice, err = s.queueGroup(ctx, tx, link, cb.id)
	}
	if err != nil {
		return nil, err
	}
	return &reply{notice: stripTags(notice)}, nil
}

// turnPage shows another page of a search in the message whose button was
// pressed.
func (s *Service) turnPage(ctx context.Context, tx *store.DB, q messenger.CallbackQuery, cb callback) (*reply, error) {
	p, err := tx.FindBotSearchPage(ctx, cb.token)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND || (err == nil && p.ChatID != q.ChatID) {
		return &reply{notice: "This search has expired: send /search again."}, nil
	} else if err != nil {
		return nil, err
	}
	if cb.page >= len(p.Cursors) {
		return &reply{notice: "This button is out of date: send /search again."}, nil
	}
	seen := len(p.Cursors)
	msg, err := s.searchPage(ctx, tx, p, cb.page)
	if err != nil {
		return nil, err
	}
	if len(p.Cursors) != seen { // outside the transaction, as in search
		if err := s.deps.DB.SetBotSearchCursors(ctx, p.Token, p.Cursors); err != nil {
			return nil, err
		}
	}
	if msg.Keyboard == nil {
		msg.Keyboard = messenger.Keyboard{} // the edit removes buttons that no longer apply
	}
	return &reply{edit: &edit{messageID: q.MessageID, msg: msg}}, nil
}

// stripTags turns a reply's HTML into the plain text of a notice.
func stripTags(html string) string {
	var b strings.Builder
	in := false
	for _, r := range html {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&amp;", "&").Replace(b.String())
}
