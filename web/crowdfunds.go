package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

var (
	deliveryStates = []hoard.DeliveryStatus{hoard.DeliveryNone, hoard.DeliveryPartial, hoard.DeliveryDone}
	paymentStates  = []hoard.PaymentStatus{hoard.PaymentUnpaid, hoard.PaymentPaid}
)

type crowdfundsPage struct {
	Items    []hoard.Crowdfund
	Hosts    []hoard.CrowdfundHost
	Filter   store.CrowdfundFilter
	Delivery []hoard.DeliveryStatus
	Payment  []hoard.PaymentStatus
}

// crowdfundsParams are the filters of the crowdfund table.
type crowdfundsParams struct {
	Delivery string `form:"delivery" validate:"omitempty,oneof=NOT_DELIVERED PARTIAL DELIVERED"`
	Payment  string `form:"payment" validate:"omitempty,oneof=UNPAID PAID"`
	Host     int64  `form:"host" validate:"gte=0"`
}

// handleCrowdfunds renders the caller's crowdfund table with filters and
// the create form.
func (s *Server) handleCrowdfunds(w http.ResponseWriter, r *http.Request) error {
	in := paramsOf[crowdfundsParams](r)
	f := store.CrowdfundFilter{Delivery: hoard.DeliveryStatus(in.Delivery), Payment: hoard.PaymentStatus(in.Payment), HostID: in.Host}
	items, err := s.deps.DB.ListCrowdfunds(r.Context(), userFrom(r.Context()).ID, f)
	if err != nil {
		return err
	}
	hosts, err := s.deps.DB.ListHosts(r.Context(), userFrom(r.Context()).ID)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "crowdfunds", page{Title: "Crowdfunds", Notice: s.crowdfundNotice(r),
		Data: crowdfundsPage{Items: items, Hosts: hosts, Filter: f, Delivery: deliveryStates, Payment: paymentStates}})
}

func (s *Server) crowdfundNotice(r *http.Request) string {
	if n := sentNotice(r); n != "" {
		return n
	}
	return noticeFor(r.URL.Query().Get("done"))
}

// crowdfundForm is the record form (create and update).
type crowdfundForm struct {
	Name           string `form:"name"`
	Link           string `form:"link" validate:"max=2000"`
	FilesURL       string `form:"files_url" validate:"max=2000"`
	Notes          string `form:"notes" validate:"max=2000"`
	DeliveryStatus string `form:"delivery_status" validate:"omitempty,oneof=NOT_DELIVERED PARTIAL DELIVERED"`
	PaymentStatus  string `form:"payment_status" validate:"omitempty,oneof=UNPAID PAID"`
	Host           string `form:"host" validate:"max=100"`
}

// crowdfundFromForm reads the record form into c.
func (s *Server) crowdfundFromForm(r *http.Request, c *hoard.Crowdfund) error {
	in := paramsOf[crowdfundForm](r)
	c.Name, c.Link, c.FilesURL, c.Notes = in.Name, in.Link, in.FilesURL, in.Notes
	c.DeliveryStatus, c.PaymentStatus = hoard.DeliveryStatus(in.DeliveryStatus), hoard.PaymentStatus(in.PaymentStatus)
	switch {
	case c.Name == "":
		return invalidField("name", "The name is required (200 characters at most).")
	case !validURL(c.Link):
		return invalidField("link", "The campaign link must be an http(s) URL.")
	case !validURL(c.FilesURL):
		return invalidField("files_url", "The files link must be an http(s) URL.")
	}
	c.HostID = 0
	if host := in.Host; host != "" {
		h, err := s.deps.DB.FindOrCreateHost(r.Context(), userFrom(r.Context()).ID, host)
		if err != nil {
			return err
		}
		c.HostID = h.ID
	}
	return nil
}

// validURL accepts "" or an http(s) URL (rendered as links, so no other
// schemes).
func validURL(s string) bool {
	return s == "" || ((strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")) && len(s) <= 2000)
}

func (s *Server) handleCreateCrowdfund(w http.ResponseWriter, r *http.Request) error {
	c := &hoard.Crowdfund{UserID: userFrom(r.Context()).ID}
	if err := s.crowdfundFromForm(r, c); err != nil {
		return err
	}
	if err := s.deps.DB.SaveCrowdfund(r.Context(), c); err != nil {
		return err
	}
	return redirect(w, r, "/crowdfunds/"+strconv.FormatInt(c.ID, 10)+"?done=saved")
}

// findCrowdfund loads the caller's {id} record: other users' records are 404.
func (s *Server) findCrowdfund(r *http.Request) (*hoard.Crowdfund, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return nil, err
	}
	c, err := s.deps.DB.FindCrowdfund(r.Context(), userFrom(r.Context()).ID, id)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil, hoard.Errorf(hoard.ENOTFOUND, "No such crowdfund record.")
	}
	return c, err
}

// searchParams are a search text of at most 200 characters (the linking
// search of a crowdfund record).
type searchParams struct {
	Q string `form:"q"`
}

type crowdfundPage struct {
	C        *hoard.Crowdfund
	Packages []hoard.Package
	Hosts    []hoard.CrowdfundHost
	Delivery []hoard.DeliveryStatus
	Payment  []hoard.PaymentStatus
	Q        string
	Results  []store.SearchHit
}

// handleCrowdfund renders one record: the edit form, its linked packages
// and the package-linking search.
func (s *Server) handleCrowdfund(w http.ResponseWriter, r *http.Request) error {
	c, err := s.findCrowdfund(r)
	if err != nil {
		return err
	}
	pkgs, err := s.deps.DB.ListCrowdfundPackages(r.Context(), c.UserID, c.ID)
	if err != nil {
		return err
	}
	hosts, err := s.deps.DB.ListHosts(r.Context(), userFrom(r.Context()).ID)
	if err != nil {
		return err
	}
	p := crowdfundPage{C: c, Packages: pkgs, Hosts: hosts, Delivery: deliveryStates, Payment: paymentStates,
		Q: paramsOf[searchParams](r).Q}
	if p.Q != "" {
		res, err := s.searchPackages(r.Context(), store.SearchQuery{Text: p.Q, Limit: 20})
		if err != nil {
			return err
		}
		p.Results = res.Hits
	}
	return s.render(w, r, http.StatusOK, "crowdfund", page{Title: c.Name, Notice: s.crowdfundNotice(r), Data: p})
}

func (s *Server) handleUpdateCrowdfund(w http.ResponseWriter, r *http.Request) error {
	c, err := s.findCrowdfund(r)
	if err != nil {
		return err
	}
	if err := s.crowdfundFromForm(r, c); err != nil {
		return err
	}
	if err := s.deps.DB.SaveCrowdfund(r.Context(), c); err != nil {
		return err
	}
	return redirect(w, r, "/crowdfunds/"+strconv.FormatInt(c.ID, 10)+"?done=saved")
}

func (s *Server) handleDeleteCrowdfund(w http.ResponseWriter, r *http.Request) error {
	c, err := s.findCrowdfund(r)
	if err != nil {
		return err
	}
	if err := s.deps.DB.DeleteCrowdfund(r.Context(), c.UserID, c.ID); err != nil {
		return err
	}
	return redirect(w, r, "/crowdfunds?done=deleted")
}

// handleLinkCrowdfundPackages links the posted package ids (form or the
// linking dialog).
func (s *Server) handleLinkCrowdfundPackages(w http.ResponseWriter, r *http.Request) error {
	c, err := s.findCrowdfund(r)
	if err != nil {
		return err
	}
	ids, err := paramsOf[idsParams](r).selected()
	if err != nil {
		return err
	}
	n, err := s.deps.DB.LinkCrowdfundPackages(r.Context(), c.UserID, c.ID, ids)
	if err != nil {
		return err
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"linked": n})
		return nil
	}
	return redirect(w, r, "/crowdfunds/"+strconv.FormatInt(c.ID, 10)+"?done=saved")
}

func (s *Server) handleUnlinkCrowdfundPackage(w http.ResponseWriter, r *http.Request) error {
	c, err := s.findCrowdfund(r)
	if err != nil {
		return err
	}
	pid, err := pathID(r, "packageId")
	if err != nil {
		return err
	}
	if err := s.deps.DB.UnlinkCrowdfundPackage(r.Context(), c.UserID, c.ID, pid); err != nil {
		return err
	}
	return redirect(w, r, "/crowdfunds/"+strconv.FormatInt(c.ID, 10)+"?done=saved")
}

// handleAPICrowdfundPackageSearch answers the linking dialog's search:
// GET /api/crowdfunds/{id}/packages/search?q= → {"items":[{id,file_name,creator,linked}]}.
func (s *Server) handleAPICrowdfundPackageSearch(w http.ResponseWriter, r *http.Request) error {
	c, err := s.findCrowdfund(r)
	if err != nil {
		return err
	}
	res, err := s.searchPackages(r.Context(), store.SearchQuery{Text: paramsOf[searchParams](r).Q, Limit: 20})
	if err != nil {
		return err
	}
	linked, err := s.deps.DB.ListCrowdfundPackages(r.Context(), c.UserID, c.ID)
	if err != nil {
		return err
	}
	isLinked := map[int64]bool{}
	for _, p := range linked {
		isLinked[p.ID] = true
	}
	type item struct {
		ID       int64  `json:"id"`
		FileName string `json:"file_name"`
		Creator  string `json:"creator"`
		Linked   bool   `json:"linked"`
	}
	items := []item{}
	for _, h := range res.Hits {
		items = append(items, item{h.Package.ID, h.Package.FileName, h.Package.Creator, isLinked[h.Package.ID]})
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
	return nil
}

// handleSendAllCrowdfund is sendAllCrowdfundPackages: every linked package
// is queued for the caller's messenger account.
func (s *Server) handleSendAllCrowdfund(w http.ResponseWriter, r *http.Request) error {
	c, err := s.findCrowdfund(r)
	if err != nil {
		return err
	}
	pkgs, err := s.deps.DB.ListCrowdfundPackages(r.Context(), c.UserID, c.ID)
	if err != nil {
		return err
	}
	if len(pkgs) == 0 {
		return hoard.Errorf(hoard.EINVALID, "No packages are linked to this record.")
	}
	ids := make([]int64, len(pkgs))
	for i, p := range pkgs {
		ids[i] = p.ID
	}
	reqs, err := s.queueSends(r.Context(), userFrom(r.Context()), userFrom(r.Context()).ID, ids, "Crowdfund: "+c.Name)
	return sendRedirect(w, r, "/crowdfunds/"+strconv.FormatInt(c.ID, 10), reqs, err)
}
