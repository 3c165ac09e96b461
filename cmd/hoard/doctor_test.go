package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
)

// doctorRun is what one `hoard doctor` run printed and how it exited.
type doctorRun struct {
	code  int
	lines []string
}

// runDoctorProc runs `hoard doctor` in the world.
func (w *botWorld) runDoctorProc(t *testing.T) doctorRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, stdout, stderr := hoardCmd(ctx, w.vars(nil), "doctor")
	err := cmd.Run()
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
		if code <= 0 {
			t.Fatalf("doctor: %v\n%s", err, stderr)
		}
	}
	t.Logf("hoard doctor (exit %d):\n%s", code, stdout)
	return doctorRun{code: code, lines: strings.Split(strings.TrimSpace(stdout.String()), "\n")}
}

// line returns the first line that starts with status and holds every
// part, "" when none does.
func (r doctorRun) line(status string, parts ...string) string {
	for _, l := range r.lines {
		if !strings.HasPrefix(l, status+" ") {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return l
		}
	}
	return ""
}

// TestDoctorChecksADeploymentAgainstThePlatform runs `hoard doctor` against
// the emulator: a bot that is not yet an administrator of the destination,
// and a source whose newest file lives on a data centre hoard cannot be
// authorized on, each fail with a line that says what to do; once both are
// fixed every check passes.
func TestDoctorChecksADeploymentAgainstThePlatform(t *testing.T) {
	// Waits on flood windows and retries more than it computes: it
	// shares the machine with the other waiting tests.
	t.Parallel()
	w := newBotWorld(t, botSeedOptions{}, messenger.DefaultBotLimits)
	w.ingest(t) // sets the account, the destination and the source up

	t.Run("the bot is no administrator of the destination", func(t *testing.T) {
		r := w.runDoctorProc(t)
		want := []struct{ status, subject, detail string }{
			{"ok", "account", "home data centre 2"},
			{"ok", "destination “Hoard Archive”", "the account reaches it"},
			{"ok", "bot @hoard_bot", "signed in"},
			{"FAIL", "bot @hoard_bot in “Hoard Archive”", "add @hoard_bot to “Hoard Archive” as an administrator"},
			{"ok", "source “Model Shop”", "read from data centre 4"},
		}
		for _, c := range want {
			if r.line(c.status, c.subject, c.detail) == "" {
				t.Errorf("no %q line for %s saying %q:\n%s", c.status, c.subject, c.detail, strings.Join(r.lines, "\n"))
			}
		}
		if r.code != exitFailure {
			t.Fatalf("exit %d, want %d", r.code, exitFailure)
		}
	})

	t.Run("a data centre that cannot be reached", func(t *testing.T) {
		w.env.Emu.InjectFault(emulator.Fault{Method: "auth.importAuthorization", Error: "AUTH_BYTES_INVALID"})
		defer w.env.Emu.ClearFaults()
		r := w.runDoctorProc(t)
		if r.line("FAIL", "source “Model Shop”", "data centre 4", "hoard must reach every data centre") == "" {
			t.Fatalf("no failed source line naming DC 4 and what to do:\n%s", strings.Join(r.lines, "\n"))
		}
	})

	t.Run("everything in place", func(t *testing.T) {
		bot := w.startBot(t, "bot-1") // makes itself an administrator through the account
		w.waitAnswering(t, bot)
		bot.stop()
		r := w.runDoctorProc(t)
		if r.code != exitOK || r.line("ok", "bot @hoard_bot in “Hoard Archive”", "an administrator") == "" {
			t.Fatalf("exit %d:\n%s", r.code, strings.Join(r.lines, "\n"))
		}
		if n := w.env.Emu.KeysKilled(); n != 0 {
			t.Fatalf("%d auth keys killed as used from two places at once", n)
		}
	})
}
