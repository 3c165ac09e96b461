package messengertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gotd/td/tgerr"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/telegram"
)

// The test binary doubles as a second client process: with these set, it
// connects with the session stored in the directory and asks for itself
// until killed.
const (
	envSharedInfo    = "HOARD_TEST_SHARED_INFO"
	envSharedSession = "HOARD_TEST_SHARED_SESSION"
)

func TestMain(m *testing.M) {
	if info := os.Getenv(envSharedInfo); info != "" {
		os.Exit(secondProcess(info, os.Getenv(envSharedSession)))
	}
	os.Exit(m.Run())
}

// fileSessions keeps sessions as files in a directory, so that two
// processes can load the same one.
type fileSessions string

func (d fileSessions) LoadSession(_ context.Context, key string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(string(d), key))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

func (d fileSessions) SaveSession(_ context.Context, key string, data []byte) error {
	return os.WriteFile(filepath.Join(string(d), key), data, 0o600)
}

// secondProcess connects with the stored session and keeps using it.
func secondProcess(infoPath, dir string) int {
	info, err := telegram.LoadEmulatorInfo(infoPath)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	acc, err := telegram.NewAccount(ctx, telegram.Config{Endpoint: info.Endpoint(), Sessions: fileSessions(dir),
		SessionKey: "account", Logger: slog.New(slog.DiscardHandler), Limiter: messenger.NewLimiter(0, 1)})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer acc.Close()
	for {
		_, err := acc.Self(ctx)
		fmt.Println("self:", err)
		if ctx.Err() != nil {
			return 0
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestOneSessionInTwoProcesses runs the account's session in this process
// and, at the same time, in another: the emulator kills the key, as the
// platform does, and both hear AUTH_KEY_DUPLICATED, then that the key is
// not signed in.
func TestOneSessionInTwoProcesses(t *testing.T) {
	env := Start(t, "")
	dir := t.TempDir()
	cfg := env.Config("account")
	cfg.Sessions = fileSessions(dir)
	acc := env.Account(t, cfg)
	ctx := ctxT(t)
	if _, err := acc.Self(ctx); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envSharedInfo+"="+filepath.Join(env.Dir, "emulator.json"), envSharedSession+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	var mine error
	deadline := time.Now().Add(30 * time.Second)
	for mine == nil && time.Now().Before(deadline) {
		_, mine = acc.Self(ctx)
		time.Sleep(50 * time.Millisecond)
	}
	if !tgerr.Is(mine, "AUTH_KEY_DUPLICATED") || !errors.Is(mine, messenger.ErrUnauthorized) {
		t.Fatalf("this process got %v, want AUTH_KEY_DUPLICATED as ErrUnauthorized", mine)
	}
	if _, err := acc.Self(ctx); !errors.Is(err, messenger.ErrUnauthorized) || tgerr.Is(err, "AUTH_KEY_DUPLICATED") {
		t.Fatalf("after the 406: %v, want the key not signed in", err)
	}
	var theirs []string
	for line := range lines {
		theirs = append(theirs, line)
		if strings.Contains(line, "AUTH_KEY_UNREGISTERED") {
			break
		}
	}
	if !strings.Contains(strings.Join(theirs, "\n"), "AUTH_KEY_DUPLICATED") {
		t.Fatalf("the other process heard:\n%s", strings.Join(theirs, "\n"))
	}
	if n := env.Emu.KeysKilled(); n != 1 {
		t.Fatalf("keys killed = %d, want 1", n)
	}
}
