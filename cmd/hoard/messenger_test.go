package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoard/hoard/demo"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/pgserver"
	"github.com/hoard/hoard/store"
)

// TestEmulatorCommand runs `hoard emulator` with the demo world and signs a
// gotd client in from its info file: log in, resolve, page history,
// download a document byte-exact; the counters are printed on exit.
func TestEmulatorCommand(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	seed, err := demo.WriteWorld(filepath.Join(dir, "world"))
	if err != nil {
		t.Fatal(err)
	}
	// A seed fault: the first history call of the channel is refused.
	raw, _ := os.ReadFile(seed)
	withFaults := strings.Replace(string(raw), `"account"`,
		`"faults": [{"method": "messages.getHistory", "channel": "mammothfactory", "error": "CHANNEL_PRIVATE", "times": 1}], "account"`, 1)
	if err := os.WriteFile(seed, []byte(withFaults), 0o644); err != nil {
		t.Fatal(err)
	}
	info := filepath.Join(dir, "info.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := hoardCmd(ctx, nil, "emulator", "--seed", seed, "--state", filepath.Join(dir, "state"), "--info", info)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(info); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no info file\n%s", stderr)
		}
	}
	ei, err := telegram.LoadEmulatorInfo(info)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := telegram.NewAccount(ctx, telegram.Config{AppID: 1, AppHash: "test", Endpoint: ei.Endpoint(),
		Sessions: messenger.NewMemorySessionStore(), SessionKey: "account"})
	if err != nil {
		t.Fatal(err)
	}
	defer acc.Close()
	if err := acc.SendCode(ctx, ei.Phone); err != nil {
		t.Fatal(err)
	}
	if err := acc.SignIn(ctx, ei.Code); err != nil {
		t.Fatal(err)
	}
	ch, err := acc.ResolveChannel(ctx, messenger.ChannelRef{Username: "mammothfactory"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acc.History(ctx, ch, messenger.HistoryQuery{}); !errors.Is(err, messenger.ErrAccessLost) {
		t.Fatalf("the seeded fault did not fire: %v", err)
	}
	msgs, err := acc.History(ctx, ch, messenger.HistoryQuery{})
	if err != nil || len(msgs) != 6 {
		t.Fatalf("history: %d messages, %v", len(msgs), err)
	}
	var doc *messenger.Message
	for i := range msgs {
		if msgs[i].Document != nil && msgs[i].Document.FileName == "Mammoth Factory - 2024-02.zip" {
			doc = &msgs[i]
		}
	}
	if doc == nil {
		t.Fatal("the February ZIP is not in the history")
	}
	var got messengertest.MemFile
	if err := acc.Download(ctx, messenger.DownloadRequest{Channel: ch, MessageID: doc.ID, Document: *doc.Document}, &got); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "world", "files", "Mammoth Factory - 2024-02.zip"))
	if string(got.Bytes()) != string(want) {
		t.Fatalf("downloaded %d bytes, want the file's %d", len(got.Bytes()), len(want))
	}
	// Topics of the forum (joined through its invite) and an upload posted
	// to the destination.
	forum, err := acc.ResolveChannel(ctx, messenger.ChannelRef{InviteHash: "EmporiumDemo"})
	if err != nil {
		t.Fatal(err)
	}
	topics, err := acc.Topics(ctx, forum)
	if err != nil || len(topics) != 4 { // General, Dragons, Terrain, Workshop
		t.Fatalf("topics: %+v, %v", topics, err)
	}
	dest, err := acc.ResolveChannel(ctx, messenger.ChannelRef{Username: "hoardarchive"})
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("uploaded bytes ", 1000)
	id, err := acc.Upload(ctx, messenger.UploadRequest{Channel: dest, Data: io.NewSectionReader(strings.NewReader(body), 0, int64(len(body))),
		FileName: "posted.zip", Caption: "posted by the test"})
	if err != nil || id == 0 {
		t.Fatalf("upload: %d, %v", id, err)
	}
	posted, err := acc.Messages(ctx, dest, []int{id})
	if err != nil || len(posted) != 1 || posted[0].Document == nil || posted[0].Document.FileName != "posted.zip" {
		t.Fatalf("posted message: %+v, %v", posted, err)
	}
	// The client stays connected: the emulator must stop anyway.
	_ = cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("emulator exit: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout.String(), "upload.getFile") || !strings.Contains(stdout.String(), "messages.getHistory") {
		t.Fatalf("counters not printed:\n%s", stdout)
	}
}

// TestDemoComesUpAndKeepsState: `hoard demo` on a fresh DATA_DIR signs the
// account in, sets the channels up, prints credentials the administrator
// can sign in with, and a restart keeps everything.
func TestDemoComesUpAndKeepsState(t *testing.T) {
	t.Parallel()
	dir := dataDir(t)
	var password string
	var chat *printedChat
	for run := 1; run <= 2; run++ {
		addr := freeAddr(t)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd, stdout, stderr := hoardCmd(ctx, map[string]string{"DATA_DIR": dir, "DATABASE_URL": ""}, "demo", "--addr", addr)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "http://"+addr+"/healthz", 120*time.Second, stderr)
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stdout.String(), "Sign in as"); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no credentials printed:\n%s", stdout)
			}
		}
		m := regexp.MustCompile(`Sign in as (\S+) with password (\S+)`).FindStringSubmatch(stdout.String())
		if m == nil {
			t.Fatalf("credentials: %s", stdout)
		}
		if run == 2 && m[2] != password {
			t.Fatalf("the password changed across restarts")
		}
		password = m[2]
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/login", strings.NewReader(url.Values{"email": {m[1]}, "password": {m[2]}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "http://"+addr) // as a browser does: the web refuses a sign-in without it
		resp, err := c.Do(req)
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("admin sign-in: %v %v", err, resp)
		}
		resp.Body.Close()
		if !strings.Contains(stderr.String(), `"demo messenger ready"`) && !strings.Contains(stderr.String(), "demo messenger ready") {
			t.Fatalf("messenger not set up:\n%s", stderr)
		}
		// The printed chat command works as printed, and a chat left open
		// across the restart answers again.
		if run == 1 {
			chat = openPrintedChat(t, stdout.String())
		}
		chat.help(t)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("demo run %d exit: %v\n%s", run, err, stderr)
		}
		cancel()
	}
	// The channels the demo set up are in the embedded database.
	ctx := context.Background()
	srv, err := pgserver.Start(ctx, pgserver.Options{DataDir: filepath.Join(dir, "pg"), Database: "hoard"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(ctx)
	db, err := store.Open(ctx, srv.URL(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	chans, err := db.ListChannels(ctx, "")
	if err != nil || len(chans) != 4 {
		t.Fatalf("channels after two demo runs: %d, %v", len(chans), err)
	}
	accs, _ := db.ListAccounts(ctx)
	if len(accs) != 1 || accs[0].AuthState != "AUTHENTICATED" {
		t.Fatalf("accounts: %+v", accs)
	}
}

// printedChat is the chat command the demo printed, running as a newcomer
// pasted it into a shell.
type printedChat struct {
	line  string
	stdin io.WriteCloser
	out   *syncBuffer
}

// openPrintedChat starts the chat command the demo printed; it ends with
// the test.
func openPrintedChat(t *testing.T, printed string) *printedChat {
	t.Helper()
	m := regexp.MustCompile(`in another terminal run\n  (.+ chat --as \S+)\n`).FindStringSubmatch(printed)
	if m == nil {
		t.Fatalf("no chat command printed:\n%s", printed)
	}
	cmd := exec.Command("sh", "-c", m[1])
	// The shell and the chat it starts are one process group, killed
	// together: killing the shell alone left a chat that was reconnecting
	// to a stopped demo holding the output pipe, and Wait waiting on it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &printedChat{line: m[1], stdin: stdin, out: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return c
}

// help asks the bot for /help until a new answer arrives (the chat may
// still be connecting: it asks again every 10 s).
func (c *printedChat) help(t *testing.T) {
	t.Helper()
	answers := func() int { return strings.Count(c.out.String(), "What I can do") }
	before := answers()
	deadline := time.Now().Add(90 * time.Second)
	for answers() == before {
		if time.Now().After(deadline) {
			t.Fatalf("the chat %q got no new answer to /help:\n%s", c.line, c.out.String())
		}
		_, _ = io.WriteString(c.stdin, "/help\n")
		for wait := time.Now().Add(10 * time.Second); answers() == before && time.Now().Before(wait); {
			time.Sleep(100 * time.Millisecond)
		}
	}
}
