package messengertest

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
)

func TestEmulatorStatePersists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed := DefaultSeed(t, dir)
	ctx := ctxT(t)

	env := StartIn(t, seed, dir)
	acc := env.Account(t, env.Config("account"))
	dest := destination(t, env, acc)
	data := generated(3000)
	id, err := acc.Upload(ctx, messenger.UploadRequest{Channel: dest, FileName: "kept.zip", Caption: "kept",
		Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := acc.JoinChannel(ctx, mustRef(t, "@openshelf")); err != nil {
		t.Fatal(err)
	}
	_ = acc.Close()
	_ = env.Emu.Close()

	// Same seed and state directory: the world continues.
	env2 := StartIn(t, seed, dir)
	acc2 := env2.Account(t, env2.Config("account")) // auth keys are not persisted: sign in again
	dest2 := destination(t, env2, acc2)
	msgs, err := acc2.Messages(ctx, dest2, []int{id})
	if err != nil || len(msgs) != 1 || msgs[0].Text != "kept" || msgs[0].Document.FileName != "kept.zip" {
		t.Fatalf("after restart = %+v, %v", msgs, err)
	}
	var back MemFile
	if err := acc2.Download(ctx, messenger.DownloadRequest{Channel: dest2, MessageID: id, Document: *msgs[0].Document}, &back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), data) {
		t.Fatal("uploaded bytes lost")
	}
	shelf, status, err := acc2.JoinChannel(ctx, mustRef(t, "@openshelf"))
	if err != nil || status != messenger.AlreadyMember || !shelf.Member {
		t.Fatalf("membership lost: %s %v", status, err)
	}
	// New ids continue after the saved ones.
	id2, err := acc2.Upload(ctx, messenger.UploadRequest{Channel: dest2, FileName: "next.zip",
		Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))})
	if err != nil || id2 != id+1 {
		t.Fatalf("next post id = %d, %v; want %d", id2, err, id+1)
	}
}

// TestEmulatorBotStatePersists: what the bot did survives an emulator
// restart — messages with their keyboards, the command list, random ids (a
// retry after the restart delivers nothing twice) and blocks.
func TestEmulatorBotStatePersists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed := DefaultSeed(t, dir)
	ctx := ctxT(t)
	env := StartIn(t, seed, dir)
	cfg := env.Config("bot") // the session store outlives the emulator
	bot := newBot(t, env, cfg)
	rec := newRecorder()
	stop := listening(t, bot, rec)
	alice := env.UserChat(t, AlicePhone)
	if _, err := alice.Start(ctx, ""); err != nil {
		t.Fatal(err)
	}
	chat := rec.next(t).ChatID
	kb := messenger.Keyboard{{{Text: "More", Data: []byte("m:1")}}}
	if _, err := bot.Send(ctx, chat, messenger.OutgoingMessage{HTML: "<b>kept</b>", Keyboard: kb, RandomID: 77}); err != nil {
		t.Fatal(err)
	}
	cmds := []messenger.BotCommand{{Command: "help", Description: "Help"}}
	if err := bot.SetCommands(ctx, cmds); err != nil {
		t.Fatal(err)
	}
	if err := env.Emu.SetBlocked(env.Emu.UserID(BobPhone), true); err != nil {
		t.Fatal(err)
	}
	stop()
	_ = bot.Close()
	_ = alice.Close()
	_ = env.Emu.Close()

	env2 := StartIn(t, seed, dir)
	if got, want := env2.Emu.BotCommands(), []emulator.BotCommand{{Command: "help", Description: "Help"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("commands after restart = %+v, want %+v", got, want)
	}
	// Auth keys are not persisted, and the port changed: a new session,
	// with what the bot learned (its update state and access hashes).
	cfg2 := env2.Config("bot")
	for _, key := range []string{"bot/updates", "bot/peers"} {
		blob, err := cfg.Sessions.LoadSession(ctx, key)
		if err != nil || blob == nil {
			t.Fatalf("%s: %v, %v", key, blob, err)
		}
		if err := cfg2.Sessions.SaveSession(ctx, key, blob); err != nil {
			t.Fatal(err)
		}
	}
	bot2 := newBot(t, env2, cfg2)
	if _, err := bot2.Send(ctx, chat, messenger.OutgoingMessage{HTML: "retry", RandomID: 77}); !errors.Is(err, messenger.ErrDuplicate) {
		t.Fatalf("a retry after the restart: %v, want ErrDuplicate", err)
	}
	alice2 := env2.UserChat(t, AlicePhone)
	want := []shown{{Text: "kept", Entities: []string{"messageEntityBold"}, Keyboard: kb}}
	if got := received(t, alice2); !reflect.DeepEqual(got, want) {
		t.Fatalf("Alice's chat after restart = %+v, want %+v", got, want)
	}
	bob := env2.UserChat(t, BobPhone)
	if _, err := bob.Send(ctx, "hi"); !errors.Is(err, messenger.ErrBlocked) {
		t.Fatalf("Bob writing to the bot he blocked: %v, want ErrBlocked (YOU_BLOCKED_USER)", err)
	}
}
