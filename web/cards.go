package web

import (
	"html/template"
	"net/url"
	"strings"
	"sync"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// hitView is a result row as the "row-head", "row-tail" and "tile-head"
// templates show it: what they would otherwise ask functions for (a
// displayable name, the size and date as text, the creator's and tags'
// links, the variant label) worked out in Go, since html/template calls
// functions through reflection.
type hitView struct {
	ID         int64
	Name       string // the file name, displayable (hoard.DisplayText)
	Variant    string
	Kind       string
	Size       string
	HasPreview bool
	// Creator is displayable; CreatorURL is its page, "" without a
	// creator.
	Creator, CreatorURL string
	Tags                []tagLink
	Group               *groupView
	Channel             string // the source channel's title, displayable
	Date                string
}

// tagLink is a tag and its page.
type tagLink struct{ Tag, URL string }

// groupView is the group a row stands for (the groups tab).
type groupView struct {
	ID      int64
	Name    string // displayable
	Members int
	Preview bool // the group shows a picture (its own or a member's)
}

// filesMatchedData is what the "files-matched" template renders.
type filesMatchedData struct {
	Hit  *store.SearchHit
	Text string
}

// card is a row's (or tile's) markup before and after the files its hit
// matched, which depend on the search and are rendered apart.
type card struct{ head, tail template.HTML }

// cardKey is everything a card shows: a card is kept under all it was
// made of, so a kept card is right for as long as it is found, whatever
// changed in the catalog meanwhile.
type cardKey struct {
	list         bool
	id           int64
	fileName     string
	kind         hoard.Kind
	size         int64
	preview      bool
	creator      string
	tags         string // joined by "\x00"
	channel      string
	minute       int64 // when it was added, in Unix minutes (the list shows it)
	group        int64
	groupName    string
	groupMembers int
	groupPreview bool
}

// cardCacheMax bounds the cards kept (a card is about 1 KB; the map is
// emptied when full).
const cardCacheMax = 10_000

// cardCache keeps the rendered cards of packages, by what they show: a
// new search result, or one rendered again after the catalog changed,
// mostly shows packages some earlier result showed. Safe for concurrent
// use.
type cardCache struct {
	mu    sync.Mutex
	cards map[cardKey]card
	// variant is the server's variant labeller (Deps.VariantLabel; nil
	// for none).
	variant func(fileName string) string
}

func newCardCache(variant func(string) string) *cardCache {
	return &cardCache{cards: map[cardKey]card{}, variant: variant}
}

// card returns h's card in the list or the grid, rendered by t (the
// catalog page's templates) unless kept; channel is the title of the
// package's source channel, groupPreview whether its group shows a picture.
func (c *cardCache) card(t *template.Template, h *store.SearchHit, list bool, channel string, groupPreview bool) (card, error) {
	p := &h.Package
	key := cardKey{list: list, id: p.ID, fileName: p.FileName, kind: p.Kind(), size: p.FileSize, preview: p.HasPreview,
		creator: p.Creator, tags: strings.Join(p.Tags, "\x00"), channel: channel}
	if list {
		key.minute = p.CreatedAt.Unix() / 60
	}
	if g := h.Group; g != nil {
		key.group, key.groupName, key.groupMembers, key.groupPreview = g.ID, g.Name, g.MemberCount, groupPreview
	}
	c.mu.Lock()
	k, ok := c.cards[key]
	c.mu.Unlock()
	if ok {
		return k, nil
	}
	v := hitView{ID: p.ID, Name: hoard.DisplayText(p.FileName), Kind: string(key.kind), Size: humanSize(p.FileSize),
		HasPreview: p.HasPreview, Channel: hoard.DisplayText(channel), Date: p.CreatedAt.UTC().Format("2006-01-02 15:04")}
	if c.variant != nil {
		v.Variant = c.variant(p.FileName)
	}
	if p.Creator != "" {
		v.Creator, v.CreatorURL = hoard.DisplayText(p.Creator), "/creators/"+url.PathEscape(p.Creator)
	}
	if len(p.Tags) > 0 {
		v.Tags = make([]tagLink, len(p.Tags))
		for i, tag := range p.Tags {
			v.Tags[i] = tagLink{Tag: tag, URL: "/tags/" + url.PathEscape(tag)}
		}
	}
	if g := h.Group; g != nil {
		v.Group = &groupView{ID: g.ID, Name: hoard.DisplayText(g.Name), Members: g.MemberCount, Preview: groupPreview}
	}
	var head, tail strings.Builder
	if list {
		if err := t.ExecuteTemplate(&head, "row-head", &v); err != nil {
			return card{}, err
		}
		if err := t.ExecuteTemplate(&tail, "row-tail", &v); err != nil {
			return card{}, err
		}
	} else {
		if err := t.ExecuteTemplate(&head, "tile-head", &v); err != nil {
			return card{}, err
		}
		tail.WriteString("\n</li>")
	}
	k = card{template.HTML(head.String()), template.HTML(tail.String())} // #nosec G203 -- the output of html/template
	c.mu.Lock()
	if len(c.cards) >= cardCacheMax {
		clear(c.cards)
	}
	c.cards[key] = k
	c.mu.Unlock()
	return k, nil
}
