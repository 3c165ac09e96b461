package web

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

type messengerPage struct {
	Channels    []hoard.Channel
	Accounts    []hoard.Account
	Destination *hoard.Channel
	Interval    time.Duration
	Sends       []hoard.BotSendRequest
	// Bot is the chat bot's status row (nil: no bot process ran yet).
	Bot     *hoard.BotStatus
	Rebuild *hoard.RebuildRun // the latest rebuild from the destination, nil when none ran
	Joins   []hoard.ChannelJoin
	// JoinsPending and AccountsBusy make the page poll until the worker is
	// done.
	JoinsPending bool
	AccountsBusy bool
	// SignedIn are the accounts that can join channels; Choices the
	// candidate destinations.
	SignedIn []hoard.Account
	Choices  []store.DestinationChoice
	// DemoNote says, in the demo, how to add an account to its emulator.
	DemoNote string
}

// handleMessengerAdmin renders messaging administration: the worker status
// panel (live through /api/ingestion/status), the rebuild panel (live
// through /api/rebuild/status), the destination channel and its choice,
// channels with their settings, the form to add a channel with the latest
// join requests, and accounts with their login forms (the page polls
// /api/messenger/joins and /api/messenger/accounts while the worker has
// something to do).
func (s *Server) handleMessengerAdmin(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	channels, err := s.deps.DB.ListChannels(ctx, "")
	if err != nil {
		return err
	}
	accounts, err := s.deps.DB.ListAccounts(ctx)
	if err != nil {
		return err
	}
	sends, err := s.deps.DB.ListBotSendRequests(ctx, 0, 50)
	if err != nil {
		return err
	}
	rebuild, err := s.latestRebuild(r)
	if err != nil {
		return err
	}
	joins, err := s.deps.DB.ListChannelJoins(ctx, 20)
	if err != nil {
		return err
	}
	choices, err := s.deps.DB.ListDestinationChoices(ctx)
	if err != nil {
		return err
	}
	p := messengerPage{Channels: channels, Accounts: accounts, Interval: s.deps.WorkerInterval, Sends: sends, Rebuild: rebuild,
		Joins: joins, Choices: choices, DemoNote: s.deps.DemoNote}
	if p.Bot, err = s.deps.DB.FindBotStatus(ctx); err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	for i := range joins {
		p.JoinsPending = p.JoinsPending || !joins[i].Status.Final()
	}
	for i := range accounts {
		p.AccountsBusy = p.AccountsBusy || accountBusy(&accounts[i])
		if accounts[i].AuthState == hoard.AuthAuthenticated && accounts[i].IsActive {
			p.SignedIn = append(p.SignedIn, accounts[i])
		}
	}
	if d, err := s.deps.DB.FindDestinationChannel(ctx); err == nil {
		p.Destination = d
	} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	return s.render(w, r, http.StatusOK, "messenger", page{Title: "Messaging", Notice: noticeFor(r.URL.Query().Get("done")), Data: p})
}

// channelParams are a channel's settings form (checkboxes: on or absent).
type channelParams struct {
	Category  string `form:"category" validate:"max=64"`
	Active    bool   `form:"active"`
	AutoGroup bool   `form:"auto_group"`
}

// handleUpdateChannel saves a channel's category, active flag and
// auto-grouping flag. A category change re-tags every package of the
// channel in the same transaction (SPEC rule 11).
func (s *Server) handleUpdateChannel(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "channelId")
	if err != nil {
		return err
	}
	in := paramsOf[channelParams](r)
	category, active, autoGroup := in.Category, in.Active, in.AutoGroup
	err = s.deps.DB.InTx(r.Context(), func(tx *store.DB) error {
		before, after, err := tx.UpdateChannelSettings(r.Context(), id, store.ChannelSettings{
			Category: &category, IsActive: &active, AutoGroupEnabled: &autoGroup})
		if err != nil {
			return err
		}
		if before.Category != after.Category {
			_, err = tx.RetagChannelPackages(r.Context(), id, before.Category, after.Category)
		}
		return err
	})
	if err != nil {
		return notFoundAs(err, "No such channel.")
	}
	s.forgetChannelTitles()
	return redirect(w, r, "/admin/messenger?done=saved")
}

// topicJSON is one forum topic's fetch state (GET
// /api/messenger/channels/{channelId}/topics).
type topicJSON struct {
	TopicID                int64   `json:"topic_id"`
	Name                   string  `json:"name"`
	IsGeneral              bool    `json:"is_general"`
	FetchEnabled           bool    `json:"fetch_enabled"`
	LastProcessedMessageID int64   `json:"last_processed_message_id"`
	LastScannedAt          *string `json:"last_scanned_at"`
	ConsecutiveEmptyScans  int     `json:"consecutive_empty_scans"`
}

func (s *Server) channelTopics(r *http.Request) (*hoard.Channel, []topicJSON, error) {
	id, err := pathID(r, "channelId")
	if err != nil {
		return nil, nil, err
	}
	ch, err := s.deps.DB.FindChannelByID(r.Context(), id)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil, nil, hoard.Errorf(hoard.ENOTFOUND, "No such channel.")
	} else if err != nil {
		return nil, nil, err
	}
	topics, err := s.deps.DB.ListChannelTopics(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	out := make([]topicJSON, len(topics))
	for i, t := range topics {
		out[i] = topicJSON{TopicID: t.TopicID, Name: t.TopicName, IsGeneral: t.IsGeneral, FetchEnabled: t.FetchEnabled,
			LastProcessedMessageID: t.LastProcessedMessageID, ConsecutiveEmptyScans: t.ConsecutiveEmptyScans}
		if !t.LastScannedAt.IsZero() && t.LastScannedAt.Year() > 1970 {
			v := t.LastScannedAt.UTC().Format(time.RFC3339)
			out[i].LastScannedAt = &v
		}
	}
	return ch, out, nil
}

// handleAPIChannelTopics answers GET /api/messenger/channels/{channelId}/topics
// with {"channel_id":…,"is_forum":…,"topics":[…]}.
func (s *Server) handleAPIChannelTopics(w http.ResponseWriter, r *http.Request) error {
	ch, topics, err := s.channelTopics(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"channel_id": ch.ID, "is_forum": ch.IsForum, "topics": topics})
	return nil
}

type channelPage struct {
	Channel *hoard.Channel
	Topics  []topicJSON
}

// handleChannelPage renders one channel with its topics and fetch toggles.
func (s *Server) handleChannelPage(w http.ResponseWriter, r *http.Request) error {
	ch, topics, err := s.channelTopics(r)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "channel", page{Title: ch.Title, Notice: noticeFor(r.URL.Query().Get("done")),
		Data: channelPage{Channel: ch, Topics: topics}})
}

// topicFetchParams are the parameters of POST
// /api/messenger/channels/{channelId}/topics/{topicId}.
type topicFetchParams struct {
	FetchEnabled *bool `form:"fetch_enabled"`
}

// handleSetTopicFetch turns fetching of a topic on or off (POST
// fetch_enabled=true|false); later runs skip disabled topics.
func (s *Server) handleSetTopicFetch(w http.ResponseWriter, r *http.Request) error {
	channelID, err := pathID(r, "channelId")
	if err != nil {
		return err
	}
	topicID, err := pathID(r, "topicId")
	if err != nil {
		return err
	}
	enabled := paramsOf[topicFetchParams](r).FetchEnabled
	if enabled == nil {
		return hoard.Errorf(hoard.EINVALID, "fetch_enabled must be true or false.")
	}
	n, err := s.deps.DB.SetChannelTopicFetchEnabled(r.Context(), channelID, topicID, *enabled)
	if err != nil {
		return err
	}
	if n == 0 {
		return hoard.Errorf(hoard.ENOTFOUND, "No account scans this channel.")
	}
	if r.PostFormValue("from") == "page" {
		return redirect(w, r, "/admin/messenger/channels/"+strconv.FormatInt(channelID, 10)+"?done=saved")
	}
	writeJSON(w, http.StatusOK, map[string]any{"channel_id": channelID, "topic_id": topicID, "fetch_enabled": *enabled})
	return nil
}

// runJSON is an ingestion run as the worker status panel shows it.
type runJSON struct {
	ID                  int64   `json:"id"`
	Status              string  `json:"status"`
	Trigger             string  `json:"trigger"`
	Activity            string  `json:"current_activity"`
	Step                string  `json:"current_step"`
	ChannelID           int64   `json:"current_channel_id,omitempty"`
	TopicID             int64   `json:"current_topic_id,omitempty"`
	AccountChannelMapID int64   `json:"current_account_channel_map_id,omitempty"`
	File                string  `json:"current_file,omitempty"`
	Bytes               int64   `json:"current_bytes"`
	TotalBytes          int64   `json:"current_total_bytes"`
	MessagesScanned     int     `json:"messages_scanned"`
	ArchivesFound       int     `json:"archives_found"`
	Duplicates          int     `json:"duplicates"`
	Ingested            int     `json:"ingested"`
	Skipped             int     `json:"skipped"`
	HeldBack            int     `json:"held_back"`
	Error               string  `json:"error_message,omitempty"`
	StartedAt           string  `json:"started_at"`
	FinishedAt          *string `json:"finished_at"`
}

func toRunJSON(run *hoard.IngestionRun) *runJSON {
	if run == nil {
		return nil
	}
	// Activity and file name quote platform text; the worker panel shows
	// them as they come.
	out := &runJSON{ID: run.ID, Status: string(run.Status), Trigger: string(run.Trigger), Activity: hoard.DisplayText(run.CurrentActivity),
		Step: run.CurrentStep, ChannelID: run.CurrentChannelID, TopicID: run.CurrentTopicID,
		AccountChannelMapID: run.CurrentAccountChannelMapID, File: hoard.DisplayText(run.CurrentFile), Bytes: run.CurrentBytes,
		TotalBytes: run.CurrentTotalBytes, MessagesScanned: run.MessagesScanned, ArchivesFound: run.ArchivesFound,
		Duplicates: run.Duplicates, Ingested: run.Ingested, Skipped: run.Skipped, HeldBack: run.HeldBack, Error: run.ErrorMessage,
		StartedAt: run.StartedAt.UTC().Format(time.RFC3339)}
	if run.FinishedAt != nil {
		v := run.FinishedAt.UTC().Format(time.RFC3339)
		out.FinishedAt = &v
	}
	return out
}

// handleIngestionStatus answers GET /api/ingestion/status: the running run
// (live activity and counters), the files in flight with their phases and
// progress (fileJSON), the last finished one, the cycle interval and when
// the next scheduled cycle is due.
func (s *Server) handleIngestionStatus(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	optional := func(run *hoard.IngestionRun, err error) (*hoard.IngestionRun, error) {
		if hoard.ErrorCode(err) == hoard.ENOTFOUND {
			return nil, nil
		}
		return run, err
	}
	running, err := optional(s.deps.DB.FindRunningRun(ctx))
	if err != nil {
		return err
	}
	topics, err := s.deps.DB.ListTopicsInProgress(ctx)
	if err != nil {
		return err
	}
	inProgress := make([]activeTopicJSON, len(topics))
	for i, tp := range topics {
		inProgress[i] = activeTopicJSON{MapID: tp.AccountChannelMapID, TopicID: tp.TopicID, Topic: hoard.DisplayText(tp.TopicName),
			ChannelID: tp.ChannelID, Channel: hoard.DisplayText(tp.ChannelTitle)}
	}
	last, err := optional(s.deps.DB.FindLastFinishedRun(ctx))
	if err != nil {
		return err
	}
	inFlight, err := s.deps.DB.ListFilesInFlight(ctx)
	if err != nil {
		return err
	}
	files := make([]fileJSON, len(inFlight))
	for i, f := range inFlight {
		files[i] = toFileJSON(f)
	}
	var next *string
	if running == nil && s.deps.WorkerInterval > 0 {
		v := hoard.NextScheduledCycle(time.Now(), s.deps.WorkerInterval).Format(time.RFC3339)
		next = &v
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"running": toRunJSON(running), "last": toRunJSON(last), "topics": inProgress, "files": files,
		"interval_seconds": int64(s.deps.WorkerInterval / time.Second), "next_cycle_at": next,
		"server_time": time.Now().UTC().Format(time.RFC3339),
	})
	return nil
}

// fileJSON is a file in flight as the worker panel lists it: its phase
// (hoard.FilePhase), for a part's upload the part (1-based) of parts, the
// phase's bytes done of total (total 0: no measure), and once the phase has
// moved bytes for a moment its rate and the time left at that rate.
type fileJSON struct {
	File        string `json:"file"`
	Phase       string `json:"phase"`
	Part        int    `json:"part,omitempty"`
	Parts       int    `json:"parts,omitempty"`
	Bytes       int64  `json:"bytes"`
	TotalBytes  int64  `json:"total_bytes"`
	BytesPerSec int64  `json:"bytes_per_second,omitempty"`
	SecondsLeft int64  `json:"seconds_left,omitempty"`
	ChannelID   int64  `json:"channel_id"`
	MessageID   int64  `json:"message_id"`
	Since       string `json:"phase_started_at"`
}

func toFileJSON(f hoard.FileProgress) fileJSON {
	out := fileJSON{File: hoard.DisplayText(f.File), Phase: string(f.Phase), Part: f.Part, Parts: f.Parts, Bytes: f.Bytes,
		TotalBytes: f.TotalBytes, BytesPerSec: int64(f.Rate()), ChannelID: f.ChannelID, MessageID: f.MessageID,
		Since: f.PhaseStartedAt.UTC().Format(time.RFC3339)}
	if left := f.Left(); left > 0 {
		out.SecondsLeft = int64(left.Round(time.Second) / time.Second)
	}
	return out
}

// activeTopicJSON is a forum topic in progress as the worker panel lists
// it, each with its own skip button.
type activeTopicJSON struct {
	MapID     int64  `json:"account_channel_map_id"`
	TopicID   int64  `json:"topic_id"`
	Topic     string `json:"topic"`
	ChannelID int64  `json:"channel_id"`
	Channel   string `json:"channel"`
}

// activeTopicParams name the topic of disableActiveTopic: the one whose
// skip button the user pressed.
type activeTopicParams struct {
	MapID   int64 `form:"account_channel_map_id" validate:"gte=0"`
	TopicID int64 `form:"topic_id" validate:"gte=0"`
}

// handleDisableActiveTopic is disableActiveTopic (POST
// account_channel_map_id, topic_id): the topic in progress that the user
// chose gets fetchEnabled=false (its row is created if absent). The worker
// reads the flag live: the file in flight finishes, the topic's remaining
// sets are skipped, and later runs skip the topic. A topic that is not in
// progress (any more) is left as it is: the worker panel's form returns
// with a notice saying so, scripts get 409.
func (s *Server) handleDisableActiveTopic(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p := paramsOf[activeTopicParams](r)
	topics, err := s.deps.DB.ListTopicsInProgress(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(topics, func(t store.TopicInProgress) bool {
		return t.AccountChannelMapID == p.MapID && t.TopicID == p.TopicID
	})
	if i < 0 {
		if fromPage(r) {
			return redirect(w, r, "/admin/messenger?done=no-topic")
		}
		return hoard.Errorf(hoard.ECONFLICT, "That forum topic is not being processed right now; nothing was changed.")
	}
	tp := topics[i]
	if err := s.deps.DB.SetTopicFetchEnabled(ctx, tp.AccountChannelMapID, tp.TopicID, false); err != nil {
		return err
	}
	s.deps.Logger.Info("topic in progress disabled", "channel", tp.ChannelID, "topic", tp.TopicID, "user", userFrom(ctx).ID)
	if fromPage(r) {
		return redirect(w, r, "/admin/messenger?done=topic-skipped")
	}
	writeJSON(w, http.StatusOK, map[string]any{"account_channel_map_id": tp.AccountChannelMapID,
		"topic_id": tp.TopicID, "topic": hoard.DisplayText(tp.TopicName), "fetch_enabled": false})
	return nil
}
