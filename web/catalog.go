package web

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// kindList names the kinds the type filter takes, for its error message.
var kindList = func() string {
	names := make([]string, len(hoard.Kinds))
	for i, k := range hoard.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}()

// catalogTabs are the tabs of the catalog page.
var catalogTabs = []string{"all", "groups", "ungrouped"}

// catalogQuery is a search as the catalog page and GET /api/packages take it
// from the URL: q, creator, tag (repeatable), channel, type, preview
// (yes/no), tab, view (grid/list), after (opaque cursor), limit.
type catalogQuery struct {
	store.SearchQuery
	Preview string // "", "yes" or "no"
	Tab     string
	View    string
	Cursor  string
	// Prev are the cursors of the pages before this one, the nearest last
	// ("" is the first page); Page is this page's number (1 = first).
	Prev []string
	Page int

	// Kind is the type filter: an archive type or a document's format.
	Kind hoard.Kind
}

// catalogParams are the parameters of the catalog page and GET
// /api/packages (and of the Skipped tab: reason, before).
type catalogParams struct {
	Q       string   `form:"q"`
	Creator string   `form:"creator"`
	Tags    []string `form:"tag" validate:"max=64,dive,max=4200"` // each a comma-separated list
	Channel int64    `form:"channel" validate:"gte=0"`
	Type    string   `form:"type"`
	Preview string   `form:"preview" validate:"omitempty,oneof=yes no true false"`
	Tab     string   `form:"tab"`
	View    string   `form:"view"`
	Sort    string   `form:"sort" validate:"omitempty,oneof=relevance newest name size"`
	Limit   *int     `form:"limit" validate:"omitempty,min=1,max=200"`
	After   string   `form:"after" validate:"max=512"`
	// Prev carries the cursors of the pages before (prevSeparator between
	// them), for the Previous link; Page numbers the page.
	Prev   string `form:"prev" validate:"max=6000"`
	Page   int    `form:"page" validate:"gte=0,lte=100000"`
	Exact  bool   `form:"-"` // creator and tags are whole names (a creator's or tag's page)
	Reason string `form:"reason" validate:"omitempty,max=32"`
	Before int64  `form:"before" validate:"gte=0"`
}

// parseCatalogQuery turns the catalog's parameters into a search.
func parseCatalogQuery(p catalogParams) (catalogQuery, error) {
	q := catalogQuery{Tab: p.Tab, View: p.View}
	q.Text = p.Q
	q.Creator = p.Creator
	for _, t := range p.Tags {
		tags, err := splitTags(t)
		if err != nil {
			return q, err
		}
		q.Tags = append(q.Tags, tags...)
	}
	if len(q.Tags) > maxTagsPerRequest {
		return q, hoard.Errorf(hoard.EINVALID, "Filter by at most %d tags.", maxTagsPerRequest)
	}
	q.ChannelID = p.Channel
	if p.Type != "" {
		k, ok := hoard.ParseKind(p.Type)
		if !ok {
			return q, invalidField("type", "type must be one of %s or DOCUMENT.", kindList)
		}
		q.Kind, q.ArchiveType, q.Extensions = k, k.ArchiveType(), k.Extensions()
	}
	q.Preview = p.Preview
	switch q.Preview {
	case "yes", "true":
		b := true
		q.HasPreview = &b
	case "no", "false":
		b := false
		q.HasPreview = &b
	}
	switch q.Tab {
	case "", "all":
		q.Tab = "all"
	case "groups":
		b := true
		q.Grouped, q.GroupRows = &b, true
	case "ungrouped":
		b := false
		q.Grouped = &b
	default:
		return q, hoard.Errorf(hoard.EINVALID, "tab must be all, groups or ungrouped.")
	}
	if q.View != "list" {
		q.View = "grid"
	}
	q.Sort = store.SortRelevance
	if p.Sort != "" {
		q.Sort = store.SearchSort(p.Sort)
	}
	if p.Limit != nil {
		q.Limit = *p.Limit
	}
	if c := p.After; c != "" {
		cur, err := decodeCursor(c)
		if err != nil {
			return q, invalidField("after", "The page cursor is not valid.")
		}
		q.After, q.Cursor = cur, c
	}
	q.WholeNames = p.Exact
	return q, parsePaging(&q, p)
}

// Paging: the cursors of earlier pages travel in the prev parameter.
const (
	prevSeparator = "." // never part of a cursor (base64url)
	prevKept      = 10  // earlier pages a Previous link can reach one by one
)

// parsePaging reads the page number and the earlier pages' cursors.
func parsePaging(q *catalogQuery, p catalogParams) error {
	q.Page = max(p.Page, 1)
	if q.Cursor == "" {
		q.Page = 1
		return nil
	}
	if p.Prev != "" {
		q.Prev = strings.Split(p.Prev, prevSeparator)
	}
	if len(q.Prev) > prevKept {
		return invalidField("prev", "prev holds at most %d page cursors.", prevKept)
	}
	for _, c := range q.Prev {
		if c == "" {
			continue
		}
		if _, err := decodeCursor(c); err != nil {
			return invalidField("prev", "An earlier page's cursor is not valid.")
		}
	}
	return nil
}

// pagingURLs are the links to the next and the previous page of a result
// shown at q ("" where there is none).
func pagingURLs(u *url.URL, q catalogQuery, res *store.SearchResult) (next, prev string) {
	if res.Next != nil {
		trail := append(append([]string{}, q.Prev...), q.Cursor)
		if q.Cursor == "" {
			trail = nil // the first page is reached with no cursor
		}
		if len(trail) > prevKept {
			trail = trail[len(trail)-prevKept:]
		}
		next = withParams(u, map[string]string{"after": encodeCursor(res.Next), "prev": strings.Join(trail, prevSeparator),
			"page": strconv.Itoa(q.Page + 1)})
	}
	if q.Cursor != "" {
		set := map[string]string{"after": "", "prev": "", "page": ""}
		if n := len(q.Prev); n > 0 {
			set["after"], set["prev"] = q.Prev[n-1], strings.Join(q.Prev[:n-1], prevSeparator)
			if set["after"] != "" {
				set["page"] = strconv.Itoa(max(q.Page-1, 2))
			}
		}
		prev = withParams(u, set)
	}
	return next, prev
}

// countText says how many packages (or groups) a result holds: "3 packages",
// "about 1,240 packages" for an estimate.
func countText(res *store.SearchResult, groups bool) string {
	noun := "packages"
	switch {
	case groups && res.CountExact:
		noun = "groups"
	case res.Count == 1 && res.CountExact:
		noun = "package"
	}
	if groups && res.Count == 1 && res.CountExact {
		noun = "group"
	}
	n := thousands(res.Count)
	if !res.CountExact {
		return "about " + n + " " + noun
	}
	return n + " " + noun
}

// thousands writes n with thousands separators (1,240).
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func encodeCursor(c *store.SearchCursor) string {
	if c == nil {
		return ""
	}
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (*store.SearchCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	var c store.SearchCursor
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	switch c.Mode {
	case store.SearchRecent, store.SearchFullText, store.SearchFullTextNewest, store.SearchShort, store.SearchSubstring:
	default:
		return nil, hoard.Errorf(hoard.EINVALID, "unknown cursor mode")
	}
	return &c, nil
}

// catalogPage is what the catalog template shows. What the template
// would otherwise work out with a function call per item (which option is
// selected, a title made displayable, a link's URL) is prepared here once
// per request: html/template calls functions through reflection, and those
// calls were most of a page's cost.
type catalogPage struct {
	Q      catalogQuery
	Result *store.SearchResult
	Next   string // URL of the next page, "" at the end
	Prev   string // URL of the previous page, "" on the first
	// Count says how many results there are ("about 1,240 packages").
	Count string
	// SuggestHTML is the filter bar's suggestions: the datalists of
	// creators and tags (the "suggestions" template).
	SuggestHTML template.HTML
	Curate      bool
	// FiltersOpen shows the filters when any is set (or the sort is not
	// the default); TagsText is the tag filter's field.
	FiltersOpen bool
	TagsText    string
	// Selects are the type, sort and preview filters; Sources are the
	// channel filter's choices: the source channels, by id.
	Selects selectsHTML
	Sources []choice
	// Tabs and Views are the links of the tab bar (all, groups, …; grid,
	// list).
	Tabs, Views []navLink
	// NewestURL lists every match newest first when the ranking was capped.
	NewestURL string
	// HitsHTML is the result rows (the "hits" template).
	HitsHTML template.HTML
	// Back is this page without its notice, where the selection's forms
	// return; Bulk is the selection bar's forms.
	Back string
	Bulk bulkBar
	// Heading introduces a creator's or a tag's page.
	Heading catalogHeading
	// Ingesting is the cycle running while the plain catalog is shown.
	Ingesting *ingestingNote
	// Live is set on the plain catalog's first page, whose script asks
	// GET /api/packages/new for packages with an id above NewestID (the
	// newest when the page was made) and announces them.
	Live     bool
	NewestID int64
}

// choice is an option of a filter's select: its value, the text shown
// (the value when empty), and whether the search uses it.
type choice struct {
	Value, Label string
	Selected     bool
}

// navLink is a link of the catalog's tab bar; Current marks the page's
// own.
type navLink struct {
	Label, URL string
	Current    bool
}

// handleCatalog renders the catalog (the spec's STL files page): search,
// filters, tabs and keyset pages. Anonymous visitors are sent to sign in.
func (s *Server) handleCatalog(w http.ResponseWriter, r *http.Request) error {
	if userFrom(r.Context()) == nil {
		return redirect(w, r, "/login")
	}
	if paramsOf[catalogParams](r).Tab == "skipped" {
		return s.handleSkipped(w, r)
	}
	return s.renderCatalog(w, r, catalogHeading{})
}

// renderCatalog renders the catalog page of the request's search under a
// heading (a creator's or a tag's page; none for the catalog itself).
func (s *Server) renderCatalog(w http.ResponseWriter, r *http.Request, heading catalogHeading) error {
	q, res, channels, err := s.catalogSearch(r)
	if err != nil {
		return err
	}
	sources, err := s.sourceChannelTitles(r)
	if err != nil {
		return err
	}
	ingesting, err := s.catalogIngesting(r, q)
	if err != nil {
		return err
	}
	p := catalogPage{Q: q, Result: res, Curate: s.canCurate(r), Back: withoutNotice(r.URL), Heading: heading, Ingesting: ingesting,
		FiltersOpen: q.Creator != "" || len(q.Tags) > 0 || q.ArchiveType != "" || q.ChannelID != 0 || q.Preview != "" ||
			q.Sort != store.SortRelevance,
		TagsText: strings.Join(q.Tags, ","), Sources: sourceChoices(sources, q.ChannelID)}
	p.Bulk = newBulkBar(formFrom(r.Context()))
	if p.Live = plainFirstPage(q) && heading == (catalogHeading{}); p.Live {
		if p.NewestID, err = s.newestPackageID(r.Context()); err != nil {
			return err
		}
	}
	if p.Selects, err = filterSelects(q); err != nil {
		return err
	}
	for _, t := range s.tabsFor(r) {
		p.Tabs = append(p.Tabs, navLink{Label: t, Current: t == q.Tab,
			URL: withParams(r.URL, map[string]string{"tab": t, "after": "", "prev": "", "page": ""})})
	}
	for _, v := range []string{"grid", "list"} {
		p.Views = append(p.Views, navLink{Label: v, Current: v == q.View, URL: withParams(r.URL, map[string]string{"view": v})})
	}
	p.Next, p.Prev = pagingURLs(r.URL, q, res)
	p.Count = countText(res, q.GroupRows)
	if res.Capped {
		p.NewestURL = withParams(r.URL, map[string]string{"sort": "newest", "after": "", "prev": "", "page": ""})
	}
	if p.SuggestHTML, err = s.filterSuggestions(r.Context()); err != nil {
		return err
	}
	if p.HitsHTML, err = s.hitsHTML(r.Context(), res, q.View, channels, q.Text); err != nil {
		return err
	}
	title := "Catalog"
	if heading.Title != "" {
		title = heading.Title
	}
	return s.render(w, r, http.StatusOK, "catalog", page{Title: title, Data: p})
}

// bulkBar is the catalog's selection bar: the posted selection and, when
// one of its forms (tags, new group, send) failed, what was posted and the
// errors beside its fields.
type bulkBar struct {
	Selection string // the ids posted, space-separated
	// Open shows the bar at once: one of its forms has an error.
	Open                                 bool
	IDErr, TagsErr, NameErr, SendMessage string
	Mode, Tags, Name                     string // the fields' values
}

// newBulkBar works out the selection bar from the failed post the page
// shows again, if any. The errors are claimed (formState) in the order the
// page shows them, so the layout shows none of them a second time.
func newBulkBar(f formState) bulkBar {
	tf, gf, sf := f.On("/packages/tags", "id", "tags"), f.On("/groups", "id", "name"), f.On("/packages/send", "id")
	b := bulkBar{Selection: strings.Join(f.Posted("id"), " ")}
	b.Open = cmp.Or(tf.Err("id"), gf.Err("id"), sf.Err("id"), tf.Err("tags"), gf.Err("name"), sf.Message()) != ""
	b.IDErr = cmp.Or(tf.Err("id"), gf.Err("id"), sf.Err("id"))
	b.Mode, b.Tags, b.TagsErr = tf.Value("mode", "add"), tf.Value("tags", ""), tf.Err("tags")
	b.SendMessage = sf.Message()
	b.Name, b.NameErr = gf.Value("name", ""), gf.Err("name")
	return b
}

// selectsHTML are the catalog's type filter and its sort and preview
// filters (which the channel filter sits between).
type selectsHTML struct{ Type, SortPreview template.HTML }

// selectsData is what the "type-select" and "sort-preview-selects"
// templates render.
type selectsData struct {
	Kinds, Sorts []choice
	Preview      string
}

// selectsKey is a selection of the type, sort and preview filters.
type selectsKey struct {
	kind    hoard.Kind
	sort    store.SearchSort
	preview string
}

// selectsCache holds the filters' renderings by selection: every catalog
// page shows them, and the few selections there are (the parameters are
// validated) make the same markup; selectsCacheMax bounds it all the same.
var selectsCache sync.Map // selectsKey → selectsHTML

var selectsCached atomic.Int64

const selectsCacheMax = 1024

// filterSelects returns the type, sort and preview filters of q with q's
// choices selected, rendered by html/template once per selection.
func filterSelects(q catalogQuery) (selectsHTML, error) {
	key := selectsKey{q.Kind, q.Sort, q.Preview}
	if h, ok := selectsCache.Load(key); ok {
		return h.(selectsHTML), nil
	}
	d := selectsData{Kinds: make([]choice, len(hoard.Kinds)), Sorts: make([]choice, len(store.SearchSorts)), Preview: q.Preview}
	for i, k := range hoard.Kinds {
		d.Kinds[i] = choice{Value: string(k), Selected: k == q.Kind}
	}
	for i, o := range store.SearchSorts {
		d.Sorts[i] = choice{Value: string(o), Selected: o == q.Sort}
	}
	var typ, sp strings.Builder
	if err := fragments.ExecuteTemplate(&typ, "type-select", d); err != nil {
		return selectsHTML{}, hoard.WrapError(hoard.EINTERNAL, err, "Could not render the page.")
	}
	if err := fragments.ExecuteTemplate(&sp, "sort-preview-selects", d); err != nil {
		return selectsHTML{}, hoard.WrapError(hoard.EINTERNAL, err, "Could not render the page.")
	}
	h := selectsHTML{template.HTML(typ.String()), template.HTML(sp.String())} // #nosec G203 -- the output of html/template
	if selectsCached.Load() < selectsCacheMax {
		if _, loaded := selectsCache.LoadOrStore(key, h); !loaded {
			selectsCached.Add(1)
		}
	}
	return h, nil
}

// sourceChoices are the channel filter's choices, by id: the titles made
// displayable (hoard.DisplayText), the selected channel marked.
func sourceChoices(titles map[int64]string, selected int64) []choice {
	ids := slices.Sorted(maps.Keys(titles))
	out := make([]choice, len(ids))
	for i, id := range ids {
		out[i] = choice{Value: strconv.FormatInt(id, 10), Label: hoard.DisplayText(titles[id]), Selected: id == selected}
	}
	return out
}

// catalogSearch runs the search a catalog request describes and returns it
// with the channel titles its rows show.
func (s *Server) catalogSearch(r *http.Request) (catalogQuery, *store.SearchResult, map[int64]string, error) {
	q, err := parseCatalogQuery(paramsOf[catalogParams](r))
	if err != nil {
		return q, nil, nil, err
	}
	res, err := s.searchPackages(r.Context(), q.SearchQuery)
	if err != nil {
		return q, nil, nil, err
	}
	channels, err := s.channelTitles(r)
	return q, res, channels, err
}

// withParams returns u's path and query with some parameters replaced ("" removes).
func withParams(u *url.URL, set map[string]string) string {
	v := u.Query()
	for k, val := range set {
		if val == "" {
			v.Del(k)
		} else {
			v.Set(k, val)
		}
	}
	if len(v) == 0 {
		return u.EscapedPath()
	}
	return u.EscapedPath() + "?" + v.Encode()
}

func (s *Server) canCurate(r *http.Request) bool {
	u := userFrom(r.Context())
	return u.IsAdmin() || (u != nil && s.deps.UsersCanCurate)
}

// channelTitles maps channel ids to titles for lists. The map is cached for
// a few seconds: every catalog page needs it, and channels change rarely
// (their settings page drops the cache).
func (s *Server) channelTitles(r *http.Request) (map[int64]string, error) {
	s.titlesMu.Lock()
	defer s.titlesMu.Unlock()
	if s.titles != nil && time.Since(s.titlesAt) < titlesTTL {
		return s.titles, nil
	}
	chs, err := s.deps.DB.ListChannels(r.Context(), "")
	if err != nil {
		return nil, err
	}
	m, sources := make(map[int64]string, len(chs)), make(map[int64]string, len(chs))
	for _, c := range chs {
		m[c.ID] = c.Title
		if c.Kind == hoard.ChannelSource {
			sources[c.ID] = c.Title
		}
	}
	s.titles, s.sourceTitles, s.titlesAt = m, sources, time.Now()
	return m, nil
}

// sourceChannelTitles maps the source channels' ids to their titles: the
// channel filter's choices (the destination holds copies of them). It
// shares channelTitles' cache.
func (s *Server) sourceChannelTitles(r *http.Request) (map[int64]string, error) {
	if _, err := s.channelTitles(r); err != nil {
		return nil, err
	}
	s.titlesMu.Lock()
	defer s.titlesMu.Unlock()
	return s.sourceTitles, nil
}

// titlesTTL bounds how stale the cached channel titles may be.
const titlesTTL = 10 * time.Second

// forgetChannelTitles drops the cached titles after a channel changed.
func (s *Server) forgetChannelTitles() {
	s.titlesMu.Lock()
	s.titles = nil
	s.titlesMu.Unlock()
}

// packageJSON is a package as the JSON API shows it.
type packageJSON struct {
	ID               int64    `json:"id"`
	FileName         string   `json:"file_name"`
	FileSize         int64    `json:"file_size"`
	ArchiveType      string   `json:"archive_type"`
	Kind             string   `json:"kind"` // STL, OBJ, 3MF, PDF … for documents (hoard.Kind)
	Creator          string   `json:"creator"`
	Tags             []string `json:"tags"`
	PartCount        int      `json:"part_count"`
	FileCount        int      `json:"file_count"`
	HasPreview       bool     `json:"has_preview"`
	ContentHash      string   `json:"content_hash,omitempty"`
	SourceChannelID  int64    `json:"source_channel_id,omitempty"`
	SourceChannel    string   `json:"source_channel,omitempty"`
	SourceMessageID  int64    `json:"source_message_id,omitempty"`
	SourceTopicID    int64    `json:"source_topic_id,omitempty"`
	SourceCaption    string   `json:"source_caption,omitempty"`
	ReplyToMessageID int64    `json:"reply_to_message_id,omitempty"`
	DestChannelID    int64    `json:"dest_channel_id,omitempty"`
	DestMessageIDs   []int64  `json:"dest_message_ids"`
	PackageGroupID   int64    `json:"package_group_id,omitempty"`
	InspectionNote   string   `json:"inspection_note,omitempty"`
	CreatedAt        string   `json:"created_at"`
	Rank             float32  `json:"rank,omitempty"`
	// FilesMatched and MatchedPaths: the package's files whose paths hold
	// the search's text (the first few paths).
	FilesMatched int      `json:"files_matched,omitempty"`
	MatchedPaths []string `json:"matched_paths,omitempty"`
	Group        *struct {
		ID          int64  `json:"id"`
		Name        string `json:"name"`
		MemberCount int    `json:"member_count"`
	} `json:"group,omitempty"`
}

func toPackageJSON(p *hoard.Package, channels map[int64]string) packageJSON {
	tags := p.Tags
	if tags == nil {
		tags = []string{}
	}
	dest := p.DestMessageIDs
	if dest == nil {
		dest = []int64{}
	}
	return packageJSON{ID: p.ID, FileName: p.FileName, FileSize: p.FileSize, ArchiveType: string(p.ArchiveType), Kind: string(p.Kind()),
		Creator: p.Creator, Tags: tags, PartCount: p.PartCount, FileCount: p.FileCount, HasPreview: p.HasPreview,
		ContentHash: p.ContentHash, SourceChannelID: p.SourceChannelID, SourceChannel: channels[p.SourceChannelID],
		SourceMessageID: p.SourceMessageID, SourceTopicID: p.SourceTopicID, SourceCaption: p.SourceCaption,
		ReplyToMessageID: p.ReplyToMessageID, DestChannelID: p.DestChannelID, DestMessageIDs: dest,
		PackageGroupID: p.PackageGroupID, InspectionNote: p.InspectionNote, CreatedAt: p.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")}
}

// handleAPIPackages answers GET /api/packages: the catalog search as JSON,
// {"items":[…],"next":"<cursor>"|null,"mode":"…","sort":"…","capped":…,
// "count":N,"count_exact":…}.
func (s *Server) handleAPIPackages(w http.ResponseWriter, r *http.Request) error {
	_, res, channels, err := s.catalogSearch(r)
	if err != nil {
		return err
	}
	items := make([]packageJSON, 0, len(res.Hits))
	for _, h := range res.Hits {
		pj := toPackageJSON(&h.Package, channels)
		pj.Rank, pj.FilesMatched, pj.MatchedPaths = h.Rank, h.FilesMatched, h.MatchedPaths
		if h.Group != nil {
			pj.Group = &struct {
				ID          int64  `json:"id"`
				Name        string `json:"name"`
				MemberCount int    `json:"member_count"`
			}{h.Group.ID, h.Group.Name, h.Group.MemberCount}
		}
		items = append(items, pj)
	}
	var next *string
	if res.Next != nil {
		c := encodeCursor(res.Next)
		next = &c
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "next": next, "mode": res.Mode, "sort": res.Sort, "capped": res.Capped,
		"count": res.Count, "count_exact": res.CountExact})
	return nil
}

// sentNotice confirms queued deliveries after a "send to me" (?sent=N),
// or says why nothing was queued (?sent=0).
func sentNotice(r *http.Request) string {
	n := r.URL.Query().Get("sent")
	k, err := strconv.Atoi(n)
	switch {
	case n == "" || err != nil || k < 0:
		return ""
	case k == 0:
		return "Nothing new to send: those packages are not published yet, or already on their way to your messenger account."
	case k == 1:
		return "Queued 1 package for delivery to your messenger account; Settings shows its progress."
	}
	return fmt.Sprintf("Queued %d packages for delivery to your messenger account, in order; Settings shows their progress.", k)
}

// tabsFor returns the catalog tabs a user sees: administrators also see
// Skipped.
func (s *Server) tabsFor(r *http.Request) []string {
	if userFrom(r.Context()).IsAdmin() {
		return append(append([]string{}, catalogTabs...), "skipped")
	}
	return catalogTabs
}

type skippedPage struct {
	Items    []hoard.SkippedPackage
	Channels map[int64]string
	Reason   string
	Next     string
	Tabs     []string
	Back     string // this page without its notice, for the Retry forms
}

// handleSkipped renders the Skipped tab (administrators): source messages
// that failed, with their channel, reason, attempt count, last error and
// dates, each with a Retry button (POST /skipped/{id}/retry).
func (s *Server) handleSkipped(w http.ResponseWriter, r *http.Request) error {
	if !userFrom(r.Context()).IsAdmin() {
		return hoard.Errorf(hoard.EFORBIDDEN, "Only administrators see skipped packages.")
	}
	in := paramsOf[catalogParams](r)
	reason := in.Reason
	items, err := s.deps.DB.ListSkippedPackages(r.Context(), hoard.SkipReason(reason), in.Before, 51)
	if err != nil {
		return err
	}
	channels, err := s.channelTitles(r)
	if err != nil {
		return err
	}
	p := skippedPage{Channels: channels, Reason: reason, Tabs: s.tabsFor(r), Back: withParams(r.URL, map[string]string{"done": ""})}
	if len(items) > 50 {
		items = items[:50]
		p.Next = withParams(r.URL, map[string]string{"before": strconv.FormatInt(items[49].ID, 10)})
	}
	p.Items = items
	return s.render(w, r, http.StatusOK, "skipped", page{Title: "Skipped", Notice: noticeFor(r.URL.Query().Get("done")), Data: p})
}
