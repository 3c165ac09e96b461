package web

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strconv"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// The administrator actions in this file start ingestion work. None of them
// does the work itself: each inserts the River job that does it in one
// transaction with whatever else must happen with it, so that the job
// exists exactly when the action's other effects do (DESIGN.md principle
// 1). The workers (jobs/maintenance.go, jobs/ingest_cycle.go) decide the
// rest.

// insertJob inserts a job in tx. A job that is already queued or running
// (the args' unique options) is not inserted again: the result says so.
func (s *Server) insertJob(ctx context.Context, tx *store.DB, args river.JobArgs) (*rivertype.JobInsertResult, error) {
	if s.deps.Queue == nil {
		return nil, hoard.WrapError(hoard.EINTERNAL, fmt.Errorf("web: no job queue for %s", args.Kind()), "The job queue is not available.")
	}
	res, err := s.deps.Queue.InsertTx(ctx, tx.Tx(), args, nil)
	if err != nil {
		return nil, fmt.Errorf("queue %s job: %w", args.Kind(), err)
	}
	return res, nil
}

// queueChecked inserts args in the transaction in which check accepted the
// request (check's error refuses it and nothing is queued).
func (s *Server) queueChecked(ctx context.Context, check func(tx *store.DB) error, args river.JobArgs) (*rivertype.JobInsertResult, error) {
	var res *rivertype.JobInsertResult
	err := s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		if err := check(tx); err != nil {
			return err
		}
		var err error
		res, err = s.insertJob(ctx, tx, args)
		return err
	})
	return res, err
}

// fromPage reports whether a page's own form posted the request (the
// "from=page" field or query parameter), as opposed to a script that wants
// JSON.
func fromPage(r *http.Request) bool {
	return r.URL.Query().Get("from") == "page" || r.PostFormValue("from") == "page"
}

// withDone adds ?done=<done> to a local path, for the notice of the page a
// form returns to.
func withDone(path, done string) string {
	u, err := url.Parse(path)
	if err != nil {
		return "/"
	}
	return withParams(u, map[string]string{"done": done})
}

// backOr is the local path a form asked to return to (its "back" field),
// or def.
func backOr(r *http.Request, def string) string {
	if b := r.PostFormValue("back"); b != "" {
		return localPath(b)
	}
	return def
}

// answerQueued answers an action that queued a job: 202 Accepted with body
// plus, when res is given, the job's id and whether it was queued (false
// when an unfinished one absorbed it), and a human-readable "message" for
// scripts (JSON); or 303 See Other to back with the done notice for a
// page's form.
func answerQueued(w http.ResponseWriter, r *http.Request, back, done string, res *rivertype.JobInsertResult, body map[string]any) error {
	if !wantsJSON(r) || fromPage(r) {
		return redirect(w, r, withDone(back, done))
	}
	if res != nil {
		body["job_id"], body["queued"] = res.Job.ID, !res.UniqueSkippedAsDuplicate
	}
	body["message"] = noticeFor(done)
	writeJSON(w, http.StatusAccepted, body)
	return nil
}

// triggerPayload is the ingestion_trigger notification's payload.
type triggerPayload struct {
	Trigger   hoard.RunTrigger `json:"trigger"`
	JobID     int64            `json:"job_id"`
	Duplicate bool             `json:"duplicate"`
	UserID    int64            `json:"user_id"`
}

// handleTriggerIngestion is triggerIngestion (POST /api/ingestion/trigger):
// it queues a manual ingestion cycle and sends the ingestion_trigger
// notification in one transaction, so the worker hears of the cycle exactly
// when its job is visible. It creates no run record: the cycle's worker
// does. While a cycle is queued or running no second one is queued; the
// answer says so ("queued": false) and is still a success. Scripts get 202
// with {"job_id","queued","message"}; the worker panel's form returns to
// its page (the "back" field, /admin/messenger by default).
func (s *Server) handleTriggerIngestion(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	me := userFrom(ctx)
	var res *rivertype.JobInsertResult
	err := s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		var err error
		if res, err = s.insertJob(ctx, tx, hoard.IngestCycleArgs{Trigger: hoard.TriggerManual}); err != nil {
			return err
		}
		payload, err := json.Marshal(triggerPayload{Trigger: hoard.TriggerManual, JobID: res.Job.ID,
			Duplicate: res.UniqueSkippedAsDuplicate, UserID: me.ID})
		if err != nil {
			return fmt.Errorf("trigger ingestion: encode payload: %w", err)
		}
		return tx.Notify(ctx, "ingestion_trigger", string(payload))
	})
	if err != nil {
		return fmt.Errorf("trigger ingestion: %w", err)
	}
	done := "triggered"
	if res.UniqueSkippedAsDuplicate {
		done = "cycle-pending"
	} else {
		s.deps.Logger.Info("ingestion cycle triggered", "job", res.Job.ID, "user", me.ID)
	}
	return answerQueued(w, r, backOr(r, "/admin/messenger"), done, res, map[string]any{})
}

// handleRescanChannel queues a rescan of a source channel from its first
// message (SPEC rule 20): the job resets the channel's watermarks and topic
// progress and queues a cycle; dedup keeps what is indexed from being
// ingested twice. The destination channel is not scanned, so it cannot be
// rescanned (422).
func (s *Server) handleRescanChannel(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "channelId")
	if err != nil {
		return err
	}
	res, err := s.queueChecked(r.Context(), func(tx *store.DB) error {
		ch, err := tx.FindChannelByID(r.Context(), id)
		if err != nil {
			return notFoundAs(err, "No such channel.")
		}
		if ch.Kind != hoard.ChannelSource {
			return hoard.Errorf(hoard.EINVALID, "Only source channels are scanned; %s is the destination.", ch.Title)
		}
		return nil
	}, hoard.RescanChannelArgs{ChannelID: id})
	if err != nil {
		return fmt.Errorf("rescan channel %d: %w", id, err)
	}
	return answerQueued(w, r, backOr(r, "/admin/messenger/channels/"+strconv.FormatInt(id, 10)), "rescan", res,
		map[string]any{"channel_id": id})
}

// repairRequest is the body of POST /api/notifications/repair.
type repairRequest struct {
	NotificationID int64 `json:"notification_id" validate:"required,gt=0"`
}

// repairForm is the form of POST /api/notifications/repair (the bell and
// the notifications page post it).
type repairForm struct {
	NotificationID int64 `form:"notification_id" validate:"gte=0"`
}

// readRepairRequest reads a repair request from JSON or a form.
func readRepairRequest(w http.ResponseWriter, r *http.Request) (repairRequest, error) {
	var req repairRequest
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return req, hoard.Errorf(hoard.EINVALID, "The request body is not valid JSON: %v", err)
		}
	} else {
		req.NotificationID = paramsOf[repairForm](r).NotificationID
	}
	if err := validate.Struct(req); err != nil {
		return req, hoard.Errorf(hoard.EINVALID, "%s", validationMessage(err, reflect.TypeOf(req)))
	}
	return req, nil
}

// repairable checks that a package can be repaired: the repair downloads
// it again from its source message, which it must have.
func repairable(p *hoard.Package) error {
	if p.SourceChannelID == 0 || p.SourceMessageID == 0 {
		return hoard.Errorf(hoard.EINVALID, "%s has no source message to download again, so it cannot be repaired.", p.FileName)
	}
	return nil
}

// queueRepair inserts the repair job of a package in tx.
func (s *Server) queueRepair(ctx context.Context, tx *store.DB, packageID int64) (*rivertype.JobInsertResult, error) {
	p, err := tx.FindPackageByID(ctx, packageID)
	if err != nil {
		return nil, notFoundAs(err, "No such package.")
	}
	if err := repairable(p); err != nil {
		return nil, err
	}
	return s.insertJob(ctx, tx, hoard.RepairPackageArgs{PackageID: p.ID})
}

// handleRepairNotification is repairPackageAction (POST
// /api/notifications/repair, JSON {"notification_id"} or the form field):
// for a MISSING_PART or HASH_MISMATCH notification about a package it
// queues the package's repair (destination cleared, watermark reset, the
// package reprocessed into the same row) and marks the notification read,
// in one transaction. Other notifications are refused (422); unknown or
// dismissed ones are not found (404).
func (s *Server) handleRepairNotification(w http.ResponseWriter, r *http.Request) error {
	req, err := readRepairRequest(w, r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	var (
		n   *hoard.Notification
		res *rivertype.JobInsertResult
	)
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		var err error
		n, err = tx.FindNotification(ctx, req.NotificationID)
		if hoard.ErrorCode(err) == hoard.ENOTFOUND || (err == nil && n.Dismissed) {
			return hoard.Errorf(hoard.ENOTFOUND, "No such notification.")
		} else if err != nil {
			return err
		}
		if !n.Type.Repairable() || n.PackageID == 0 {
			return hoard.Errorf(hoard.EINVALID, "Only MISSING_PART and HASH_MISMATCH notifications about a package can be repaired.")
		}
		if res, err = s.queueRepair(ctx, tx, n.PackageID); err != nil {
			return err
		}
		return tx.MarkNotificationRead(ctx, n.ID)
	})
	if err != nil {
		return fmt.Errorf("repair from notification %d: %w", req.NotificationID, err)
	}
	s.deps.Logger.Info("package repair queued", "package", n.PackageID, "notification", n.ID, "user", userFrom(ctx).ID)
	return answerQueued(w, r, backOr(r, "/notifications"), "repair", res, map[string]any{"notification_id": n.ID,
		"package_id": n.PackageID, "is_read": true})
}

// handleRepairPackage queues the repair of a package from its page (POST
// /packages/{id}/repair), like repairPackageAction without a notification;
// the repair job resolves the package's notifications when it runs.
func (s *Server) handleRepairPackage(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	ctx := r.Context()
	var res *rivertype.JobInsertResult
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		var err error
		res, err = s.queueRepair(ctx, tx, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("repair package %d: %w", id, err)
	}
	s.deps.Logger.Info("package repair queued", "package", id, "user", userFrom(ctx).ID)
	return answerQueued(w, r, "/packages/"+strconv.FormatInt(id, 10), "repair", res,
		map[string]any{"package_id": id})
}

// handleRetrySkipped queues a manual retry of a skipped source message
// (POST /skipped/{id}/retry, SPEC rule 12): the job gives the record a
// fresh attempt budget, moves the watermark back before the message and
// queues a cycle. The form returns to the Skipped tab.
func (s *Server) handleRetrySkipped(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	res, err := s.queueChecked(r.Context(), func(tx *store.DB) error {
		_, err := tx.FindSkippedPackage(r.Context(), id)
		return notFoundAs(err, "No such skipped package.")
	}, hoard.RetrySkippedArgs{SkippedID: id})
	if err != nil {
		return fmt.Errorf("retry skipped package %d: %w", id, err)
	}
	return answerQueued(w, r, backOr(r, "/?tab=skipped"), "retry", res,
		map[string]any{"skipped_id": id})
}
