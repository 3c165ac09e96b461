package messengertest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/telegram"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustRef(t *testing.T, s string) messenger.ChannelRef {
	t.Helper()
	ref, err := messenger.ParseChannelRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func TestLogin(t *testing.T) {
	t.Parallel()
	env := Start(t, "")
	ctx := ctxT(t)
	cfg := env.Config("account")
	acc, err := telegram.NewAccount(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer acc.Close()
	if ok, err := acc.Authorized(ctx); err != nil || ok {
		t.Fatalf("fresh session authorized = %v, %v", ok, err)
	}
	if _, err := acc.Self(ctx); !errors.Is(err, messenger.ErrUnauthorized) {
		t.Fatalf("Self before login: %v, want ErrUnauthorized", err)
	}
	if err := acc.SignIn(ctx, "1"); hoard.ErrorCode(err) != hoard.EINVALID {
		t.Fatalf("SignIn without code: %v", err)
	}
	if err := acc.SendCode(ctx, env.Info.Phone); err != nil {
		t.Fatal(err)
	}
	if err := acc.SignIn(ctx, "00000"); !errors.Is(err, messenger.ErrInvalidCode) {
		t.Fatalf("wrong code: %v, want ErrInvalidCode", err)
	}
	if err := acc.SignIn(ctx, env.Info.Code); err != nil {
		t.Fatal(err)
	}
	self, err := acc.Self(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if self.ID != env.Emu.AccountID() || self.Premium || self.Bot {
		t.Fatalf("self = %+v", self)
	}
	// The session persists: a new client on the same store is signed in.
	_ = acc.Close()
	again, err := telegram.NewAccount(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if ok, err := again.Authorized(ctx); err != nil || !ok {
		t.Fatalf("restored session authorized = %v, %v", ok, err)
	}
	if err := again.SendCode(ctx, "+19999999999"); err == nil {
		t.Fatal("unknown phone accepted")
	}
}

func TestLoginCodeHook(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed, err := emulator.LoadSeed(DefaultSeed(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	emu, err := emulator.New(emulator.Options{Seed: seed, StateDir: filepath.Join(dir, "state"), Key: sharedKey(t),
		LoginCode: "13579", OnCode: func(phone, code string) { got <- code }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if err := emu.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	info := emu.Info()
	acc, err := telegram.NewAccount(ctx, telegram.Config{
		Endpoint: endpointOf(info),
		Sessions: messenger.NewMemorySessionStore(), SessionKey: "a", Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer acc.Close()
	if err := acc.SendCode(ctx, info.Phone); err != nil {
		t.Fatal(err)
	}
	if err := acc.SignIn(ctx, <-got); err != nil {
		t.Fatal(err)
	}
}

func TestChannels(t *testing.T) {
	t.Parallel()
	env := Start(t, "")
	acc := env.Account(t, env.Config("account"))
	ctx := ctxT(t)

	for _, link := range []string{"https://t.me/mammothfactory", "@mammothfactory", "mammothfactory", "t.me/+AbCd123", "https://t.me/joinchat/AbCd123"} {
		ch, err := acc.ResolveChannel(ctx, mustRef(t, link))
		if err != nil {
			t.Fatalf("resolve %s: %v", link, err)
		}
		type channel struct {
			Title                           string
			HasID, Member, Forum, Protected bool
		}
		if diff := cmp.Diff(channel{Title: "Mammoth Factory [Completed] 🦣", HasID: true, Member: true},
			channel{ch.Title, ch.ID != 0, ch.Member, ch.Forum, ch.Protected}); diff != "" {
			t.Fatalf("resolve %s (-want +got):\n%s", link, diff)
		}
	}
	if _, err := acc.ResolveChannel(ctx, mustRef(t, "@nosuchchannel")); !errors.Is(err, messenger.ErrNotFound) {
		t.Fatalf("unknown username: %v", err)
	}
	if _, err := acc.ResolveChannel(ctx, mustRef(t, "@hoard_bot")); !errors.Is(err, messenger.ErrNotFound) {
		t.Fatalf("a bot is not a channel: %v", err)
	}
	if _, err := acc.ResolveChannel(ctx, mustRef(t, "t.me/+Nope1")); !errors.Is(err, messenger.ErrNotFound) {
		t.Fatalf("unknown invite: %v", err)
	}

	// Invite of a channel not joined yet: title only, then join.
	vault, err := acc.ResolveChannel(ctx, mustRef(t, "t.me/+Vault99"))
	if err != nil || vault.Member || vault.Title != "Secret Vault" {
		t.Fatalf("vault preview = %+v, %v", vault, err)
	}
	vault, status, err := acc.JoinChannel(ctx, mustRef(t, "t.me/+Vault99"))
	if err != nil || status != messenger.Joined || !vault.Protected || !vault.Member {
		t.Fatalf("join vault = %+v %s %v", vault, status, err)
	}
	if _, status, err = acc.JoinChannel(ctx, mustRef(t, "t.me/+Vault99")); err != nil || status != messenger.AlreadyMember {
		t.Fatalf("join vault again = %s %v", status, err)
	}
	knock, status, err := acc.JoinChannel(ctx, mustRef(t, "t.me/+Knock1"))
	if err != nil || status != messenger.RequestSent || knock.Member || knock.Title != "Members Only" {
		t.Fatalf("join by request = %+v %s %v", knock, status, err)
	}
	shelf, status, err := acc.JoinChannel(ctx, mustRef(t, "@openshelf"))
	if err != nil || status != messenger.Joined || !shelf.Member {
		t.Fatalf("join openshelf = %+v %s %v", shelf, status, err)
	}
	if _, status, err = acc.JoinChannel(ctx, mustRef(t, "@mammothfactory")); err != nil || status != messenger.AlreadyMember {
		t.Fatalf("join mammoth = %s %v", status, err)
	}

	info, err := acc.ChannelInfo(ctx, vault)
	if err != nil || !info.Protected || info.Title != "Secret Vault" {
		t.Fatalf("info = %+v, %v", info, err)
	}
	// Another viewer's access hash is refused.
	bad := vault
	bad.AccessHash++
	if _, err := acc.ChannelInfo(ctx, bad); !errors.Is(err, messenger.ErrAccessLost) {
		t.Fatalf("foreign access hash: %v", err)
	}
	// Kicked from a private channel: access lost.
	if err := env.Emu.SetMember(vault.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := acc.History(ctx, vault, messenger.HistoryQuery{}); !errors.Is(err, messenger.ErrAccessLost) || hoard.ErrorCode(err) != hoard.EFORBIDDEN {
		t.Fatalf("history after kick: %v", err)
	}
	if _, err := acc.ChannelInfo(ctx, vault); !errors.Is(err, messenger.ErrAccessLost) {
		t.Fatalf("info after kick: %v", err)
	}
}

func TestHistoryAndTopics(t *testing.T) {
	t.Parallel()
	env := Start(t, "")
	acc := env.Account(t, env.Config("account"))
	ctx := ctxT(t)
	ch, err := acc.ResolveChannel(ctx, mustRef(t, "@mammothfactory"))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := acc.History(ctx, ch, messenger.HistoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 5 {
		t.Fatalf("got %d messages, want 5: %+v", len(msgs), msgs)
	}
	for i := 1; i < len(msgs); i++ {
		if msgs[i].ID <= msgs[i-1].ID {
			t.Fatal("history not ascending")
		}
	}
	zip, cover, same, gen, text := msgs[0], msgs[1], msgs[2], msgs[3], msgs[4]
	if zip.Document == nil {
		t.Fatalf("zip post without a document: %+v", zip)
	}
	type post struct {
		FileName, MimeType, Text string
		Size, GroupedID          int64
		Date                     time.Time
	}
	wantPost := post{"Mammoth Factory - 2024-01.zip", "application/zip", "January", ZipSize, 7, time.Date(2024, 1, 5, 10, 0, 0, 0, time.UTC)}
	gotPost := post{zip.Document.FileName, zip.Document.MimeType, zip.Text, zip.Document.Size, zip.GroupedID, zip.Date.UTC()}
	if diff := cmp.Diff(wantPost, gotPost); diff != "" {
		t.Fatalf("zip post (-want +got):\n%s", diff)
	}
	if cover.Photo == nil || cover.GroupedID != 7 || cover.Photo.Width != 64 {
		t.Fatalf("cover post = %+v", cover)
	}
	if same.Document == nil || same.Document.RemoteUniqueID() != zip.Document.RemoteUniqueID() {
		t.Fatal("same_document_as must share the remote unique id")
	}
	if gen.Document == nil || gen.Document.Size != GeneratedSize || gen.Document.FileName != "Huge Pack.zip.001" {
		t.Fatalf("generated post = %+v", gen.Document)
	}
	if text.Text != "hello" || text.ReplyToID != zip.ID || text.Document != nil {
		t.Fatalf("text post = %+v", text)
	}
	after, err := acc.History(ctx, ch, messenger.HistoryQuery{AfterID: same.ID})
	if err != nil || len(after) != 2 || after[0].ID != gen.ID {
		t.Fatalf("after watermark = %+v, %v", after, err)
	}
	got, err := acc.Messages(ctx, ch, []int{gen.ID, 9999, zip.ID})
	if err != nil || len(got) != 2 || got[0].ID != gen.ID || got[1].ID != zip.ID {
		t.Fatalf("messages by id = %+v, %v", got, err)
	}
	thumb, err := acc.DownloadThumbnail(ctx, ch, cover)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(env.Dir, "files", "cover.jpg"))
	if !bytes.Equal(thumb, want) {
		t.Fatal("thumbnail bytes differ")
	}

	forumCh, err := acc.ResolveChannel(ctx, mustRef(t, "t.me/+Forum42"))
	if err != nil || !forumCh.Forum {
		t.Fatalf("forum = %+v, %v", forumCh, err)
	}
	topics, err := acc.Topics(ctx, forumCh)
	if err != nil {
		t.Fatal(err)
	}
	if len(topics) != 2 || topics[0].ID != messenger.GeneralTopicID || topics[0].Title != "General" || topics[1].Title != "Dragons" {
		t.Fatalf("topics = %+v", topics)
	}
	general, err := acc.History(ctx, forumCh, messenger.HistoryQuery{TopicID: messenger.GeneralTopicID})
	if err != nil || len(general) != 1 || general[0].Document.FileName != "general.pdf" {
		t.Fatalf("general = %+v, %v", general, err)
	}
	dragons, err := acc.History(ctx, forumCh, messenger.HistoryQuery{TopicID: topics[1].ID})
	if err != nil || len(dragons) != 2 || dragons[0].Document == nil {
		t.Fatalf("dragons = %+v, %v", dragons, err)
	}
	type topicPost struct {
		FileName           string
		TopicID, ReplyToID int
	}
	if diff := cmp.Diff(topicPost{"dragon.stl", topics[1].ID, 0},
		topicPost{dragons[0].Document.FileName, dragons[0].TopicID, dragons[0].ReplyToID}); diff != "" {
		t.Fatalf("first dragon post (-want +got):\n%s", diff)
	}
	if r := dragons[1]; r.TopicID != topics[1].ID || r.ReplyToID != dragons[0].ID || r.Text != "supports included?" {
		t.Fatalf("reply inside a topic = %+v", r)
	}
	all, err := acc.History(ctx, forumCh, messenger.HistoryQuery{})
	if err != nil || len(all) != 3 {
		t.Fatalf("whole forum = %+v, %v", all, err)
	}
	if _, err := acc.Topics(ctx, ch); err == nil {
		t.Fatal("topics of a broadcast channel succeeded")
	}
}

func TestLoginTwoStep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedPath := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(seedPath, []byte(`{"account": {"phone": "+15550000002", "password": "correct horse", "premium": true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := StartIn(t, seedPath, dir)
	ctx := ctxT(t)
	acc, err := telegram.NewAccount(ctx, env.Config("account"))
	if err != nil {
		t.Fatal(err)
	}
	defer acc.Close()
	if err := acc.SendCode(ctx, env.Info.Phone); err != nil {
		t.Fatal(err)
	}
	if err := acc.SignIn(ctx, env.Info.Code); !errors.Is(err, messenger.ErrPasswordNeeded) {
		t.Fatalf("sign in: %v, want ErrPasswordNeeded", err)
	}
	if ok, _ := acc.Authorized(ctx); ok {
		t.Fatal("authorized before the password")
	}
	if err := acc.CheckPassword(ctx, "wrong"); !errors.Is(err, messenger.ErrInvalidCode) {
		t.Fatalf("wrong password: %v, want ErrInvalidCode", err)
	}
	if err := acc.CheckPassword(ctx, "correct horse"); err != nil {
		t.Fatal(err)
	}
	self, err := acc.Self(ctx)
	if err != nil || self.ID != env.Emu.AccountID() || !self.Premium {
		t.Fatalf("self = %+v, %v (want the Premium flag)", self, err)
	}
}

// endpointOf is the adapter's endpoint for an emulator's info.
func endpointOf(info emulator.Info) *telegram.Endpoint {
	ep := &telegram.Endpoint{Addr: info.Addr, DC: info.DC, PublicKeys: info.PublicKeys}
	for _, d := range info.DCs {
		ep.DCs = append(ep.DCs, telegram.EmulatorDC{ID: d.ID, Addr: d.Addr})
	}
	return ep
}
