package web

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// mergeCookie remembers the source group of a two-step merge (Start Merge
// here → Merge Here) for the browser that started it.
const mergeCookie = "hoard_merge_source"

// maxPreviewBytes caps uploaded preview images.
const maxPreviewBytes = 2 << 20

// findGroup loads the {id} group.
func (s *Server) findGroup(r *http.Request) (*hoard.PackageGroup, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return nil, err
	}
	g, err := s.deps.DB.FindGroupByID(r.Context(), id)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil, hoard.Errorf(hoard.ENOTFOUND, "No such group.")
	}
	return g, err
}

type groupPage struct {
	G       *hoard.PackageGroup
	Members []hoard.Package
	Rules   []hoard.GroupingRule
	// Declined is the rule learning declined for this manual group, with
	// why (nil when none).
	Declined *store.DeclinedRule
	// Learning is set while the group's learn_group_rule job is not done.
	Learning    bool
	Curate      bool
	MergeSource *hoard.PackageGroup // a merge started elsewhere, offered here
	Merging     bool                // this group is the merge source
}

// handleGroup renders a group: members, rules, and for curators rename,
// preview, remove, dissolve and the two merge steps.
func (s *Server) handleGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := s.findGroup(r)
	if err != nil {
		return err
	}
	members, _, err := s.deps.DB.ListPackages(r.Context(), store.PackageFilter{GroupID: g.ID}, nil, 500)
	if err != nil {
		return err
	}
	rules, err := s.deps.DB.ListGroupRules(r.Context(), g.ID)
	if err != nil {
		return err
	}
	declined, err := s.deps.DB.FindDeclinedRule(r.Context(), g.ID)
	if err != nil {
		return err
	}
	learning, err := s.deps.DB.HasUnfinishedJob(r.Context(), hoard.LearnGroupRuleArgs{}.Kind(), hoard.LearnGroupRuleArgs{GroupID: g.ID})
	if err != nil {
		return err
	}
	p := groupPage{G: g, Members: members, Rules: rules, Declined: declined, Learning: learning, Curate: s.canCurate(r)}
	if c, err := r.Cookie(mergeCookie); err == nil {
		if id, err := strconv.ParseInt(c.Value, 10, 64); err == nil {
			if id == g.ID {
				p.Merging = true
			} else if src, err := s.deps.DB.FindGroupByID(r.Context(), id); err == nil {
				p.MergeSource = src
			}
		}
	}
	return s.render(w, r, http.StatusOK, "group", page{Title: g.Name, Data: p})
}

func groupURL(id int64, done string) string {
	u := "/groups/" + strconv.FormatInt(id, 10)
	if done != "" {
		u += "?done=" + done
	}
	return u
}

// createGroupParams are the parameters of POST /groups.
type createGroupParams struct {
	idsParams
	Name string `form:"name"`
}

// handleCreateGroup creates a manual group from selected packages (bulk
// action). The rule it teaches is learned by a learn_group_rule job queued
// in the same transaction.
func (s *Server) handleCreateGroup(w http.ResponseWriter, r *http.Request) error {
	in := paramsOf[createGroupParams](r)
	ids, err := in.selected()
	if err != nil {
		return err
	}
	name := in.Name
	var g *hoard.PackageGroup
	err = s.deps.DB.InTx(r.Context(), func(tx *store.DB) error {
		if name == "" {
			first, err := tx.FindPackageByID(r.Context(), ids[0])
			if err != nil {
				return err
			}
			name = strings.TrimSuffix(first.FileName, fileExt(first.FileName))
		}
		if g, err = tx.CreateManualGroup(r.Context(), name, ids); err != nil {
			return aboutField("name", err)
		}
		_, err = s.deps.Queue.InsertTx(r.Context(), tx.Tx(), hoard.LearnGroupRuleArgs{GroupID: g.ID}, nil)
		return err
	})
	if err != nil {
		return err
	}
	return redirect(w, r, withNotice(groupURL(g.ID, ""), "group-created", len(ids)))
}

// fileExt is the extension of a file name, with its dot ("" if none).
func fileExt(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[i:]
	}
	return ""
}

// renameGroupParams are the parameters of POST /groups/{id}/rename.
type renameGroupParams struct {
	Name string `form:"name"`
}

// handleRenameGroup renames a group.
func (s *Server) handleRenameGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := s.findGroup(r)
	if err != nil {
		return err
	}
	if _, err := s.deps.DB.RenameGroup(r.Context(), g.ID, paramsOf[renameGroupParams](r).Name); err != nil {
		return aboutField("name", err)
	}
	return redirect(w, r, groupURL(g.ID, "renamed"))
}

// handleRemoveFromGroup takes one package out of a group; it is not grouped
// automatically again. An emptied group disappears.
func (s *Server) handleRemoveFromGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := s.findGroup(r)
	if err != nil {
		return err
	}
	pid, err := pathID(r, "packageId")
	if err != nil {
		return err
	}
	deleted, err := s.deps.DB.RemovePackageFromGroup(r.Context(), g.ID, pid)
	if err != nil {
		return err
	}
	if deleted {
		return redirect(w, r, "/?tab=groups")
	}
	return redirect(w, r, groupURL(g.ID, "saved"))
}

func (s *Server) handleDissolveGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := s.findGroup(r)
	if err != nil {
		return err
	}
	if _, err := s.deps.DB.DissolveGroup(r.Context(), g.ID); err != nil {
		return err
	}
	return redirect(w, r, "/?tab=groups&done=dissolved")
}

// handleStartMerge is the first merge step: this group becomes the source.
func (s *Server) handleStartMerge(w http.ResponseWriter, r *http.Request) error {
	g, err := s.findGroup(r)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: mergeCookie, Value: strconv.FormatInt(g.ID, 10), Path: "/", MaxAge: 3600,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
	return redirect(w, r, "/?tab=groups&done=merge-started")
}

// mergeParams are the parameters of POST /groups/{id}/merge: the source
// group, when the form names it (else the merge started with Start merge).
type mergeParams struct {
	Source int64 `form:"source" validate:"gte=0"`
}

// handleMergeHere is mergeGroupsAction, the second step: the source's
// packages and rules move to this group and the source disappears.
func (s *Server) handleMergeHere(w http.ResponseWriter, r *http.Request) error {
	g, err := s.findGroup(r)
	if err != nil {
		return err
	}
	sourceID := paramsOf[mergeParams](r).Source
	if sourceID == 0 {
		if c, cerr := r.Cookie(mergeCookie); cerr == nil {
			sourceID, _ = strconv.ParseInt(c.Value, 10, 64)
		}
	}
	if sourceID <= 0 {
		return hoard.Errorf(hoard.EINVALID, "Choose the group to merge first (Start merge here).")
	}
	if _, err := s.deps.DB.MergeGroups(r.Context(), sourceID, g.ID); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: mergeCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.secure})
	return redirect(w, r, groupURL(g.ID, "merged"))
}

// handleSendGroup queues every package of a group for the caller.
func (s *Server) handleSendGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := s.findGroup(r)
	if err != nil {
		return err
	}
	ids, err := s.deps.DB.ListGroupDeliveryOrder(r.Context(), g.ID)
	if err != nil {
		return err
	}
	reqs, err := s.queueSends(r.Context(), userFrom(r.Context()), userFrom(r.Context()).ID, ids, groupTitle(g))
	return sendRedirect(w, r, groupURL(g.ID, ""), reqs, err)
}

// handleGroupPreview serves a group's preview image.
func (s *Server) handleGroupPreview(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	data, err := s.deps.DB.FindGroupPreview(r.Context(), id)
	if err != nil {
		return notFoundAs(err, "This group has no preview.")
	}
	return serveImage(w, data)
}

// readPreviewUpload reads an uploaded image (field "image", JPEG, PNG, GIF
// or WebP by content, at most 2 MiB) and returns it re-encoded like every
// preview (previewImage).
func readPreviewUpload(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxPreviewBytes+64<<10)
	f, _, err := r.FormFile("image")
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, hoard.Errorf(hoard.ETOOLARGE, "The image is larger than 2 MiB.")
		}
		return nil, hoard.Errorf(hoard.EINVALID, "Choose an image file (at most 2 MiB).")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPreviewBytes+1))
	if err != nil {
		return nil, hoard.Errorf(hoard.EINVALID, "The image could not be read.")
	}
	if len(data) > maxPreviewBytes {
		return nil, hoard.Errorf(hoard.ETOOLARGE, "The image is larger than 2 MiB.")
	}
	switch http.DetectContentType(data) {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return previewImage(r.Context(), data)
	}
	return nil, hoard.Errorf(hoard.EINVALID, "The file is not a JPEG, PNG, GIF or WebP image.")
}

func (s *Server) handleSetGroupPreview(w http.ResponseWriter, r *http.Request) error {
	g, err := s.findGroup(r)
	if err != nil {
		return err
	}
	data, err := readPreviewUpload(w, r)
	if err != nil {
		return aboutField("image", err)
	}
	if err := s.deps.DB.SetGroupPreview(r.Context(), g.ID, data); err != nil {
		return err
	}
	return redirect(w, r, groupURL(g.ID, "saved"))
}

// handleSetPackagePreview stores an uploaded custom preview for a package
// (previewMsgId stays unset: the image came from no message).
func (s *Server) handleSetPackagePreview(w http.ResponseWriter, r *http.Request) error {
	p, err := s.findPackage(r)
	if err != nil {
		return err
	}
	data, err := readPreviewUpload(w, r)
	if err != nil {
		return aboutField("image", err)
	}
	if err := s.deps.DB.SetPackagePreview(r.Context(), p.ID, data, 0); err != nil {
		return err
	}
	return redirect(w, r, "/packages/"+strconv.FormatInt(p.ID, 10)+"?done=saved")
}

// handleDeleteGroupRule removes a learned rule from a group: later
// grouping runs no longer apply it; the packages it took in stay.
func (s *Server) handleDeleteGroupRule(w http.ResponseWriter, r *http.Request) error {
	g, err := s.findGroup(r)
	if err != nil {
		return err
	}
	ruleID, err := pathID(r, "ruleId")
	if err != nil {
		return err
	}
	if err := s.deps.DB.DeleteGroupRule(r.Context(), g.ID, ruleID); err != nil {
		return notFoundAs(err, "The group has no such rule.")
	}
	return redirect(w, r, groupURL(g.ID, "rule-removed"))
}

// handleLearnDeclinedRule learns the rule that learning declined for a
// group (the user decided it is right after all): the rule, the decision
// and a group_channel job for its channel in one transaction.
func (s *Server) handleLearnDeclinedRule(w http.ResponseWriter, r *http.Request) error {
	g, err := s.findGroup(r)
	if err != nil {
		return err
	}
	err = s.deps.DB.InTx(r.Context(), func(tx *store.DB) error {
		d, err := tx.FindDeclinedRule(r.Context(), g.ID)
		if err != nil {
			return err
		}
		if d == nil {
			return hoard.Errorf(hoard.ECONFLICT, "There is no declined rule to learn for this group.")
		}
		if _, err := tx.AddGroupingRule(r.Context(), &hoard.GroupingRule{GroupID: g.ID, SignalType: d.SignalType,
			Pattern: d.Pattern, Confidence: declinedRuleConfidence}); err != nil {
			return err
		}
		if err := tx.SetDeclinedRule(r.Context(), g.ID, nil); err != nil {
			return err
		}
		if g.SourceChannelID == 0 {
			return nil
		}
		_, err = s.deps.Queue.InsertTx(r.Context(), tx.Tx(), hoard.GroupChannelArgs{ChannelID: g.SourceChannelID}, nil)
		return err
	})
	if err != nil {
		return err
	}
	return redirect(w, r, groupURL(g.ID, "rule-learned"))
}

// declinedRuleConfidence is the confidence of a rule a user learned after
// learning declined it: the lowest a learned rule has (a creator's), as it
// matches more than the group.
const declinedRuleConfidence = 0.5
