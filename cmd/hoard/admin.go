package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/web"
)

// runAdmin runs the administration commands:
//
//	hoard admin create-admin [--email E]   print a one-time link that registers an administrator
//	hoard admin invite [--max-uses N] [--expires 72h] [--count N]   create invite codes; the last line is the code
func runAdmin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: hoard admin create-admin [--email E] | invite [--max-uses N] [--expires 72h] [--count N]")
		return exitUsage
	}
	sub, rest := args[0], args[1:]
	fs := flag.NewFlagSet("hoard admin "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opt web.InviteOptions
	var expires time.Duration
	var email string
	switch sub {
	case "create-admin":
		fs.StringVar(&email, "email", "", "the administrator's email (recorded on the link)")
		expires = 24 * time.Hour
		opt = web.InviteOptions{Count: 1, MaxUses: 1, Role: hoard.RoleAdmin}
	case "invite":
		fs.IntVar(&opt.MaxUses, "max-uses", 1, "registrations each code allows")
		fs.IntVar(&opt.Count, "count", 1, "how many codes")
		fs.DurationVar(&expires, "expires", 7*24*time.Hour, "validity (0 = never)")
		opt.Role = hoard.RoleUser
	default:
		fmt.Fprintf(stderr, "hoard admin: unknown subcommand %q\n", sub)
		return exitUsage
	}
	if err := fs.Parse(rest); err != nil || fs.NArg() > 0 {
		return exitUsage
	}
	opt.ExpiresIn = expires
	if email != "" {
		opt.Note = "administrator " + email
	}
	cfg, ok := configOrExit(getenv, stderr)
	if !ok {
		return exitUsage
	}
	a, err := openApp(ctx, cfg, store.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "hoard admin: %v\n", err)
		return exitFailure
	}
	defer a.close()
	codes, err := web.CreateInvites(ctx, a.db, opt)
	if err != nil {
		fmt.Fprintf(stderr, "hoard admin %s: %s\n", sub, hoard.ErrorMessage(err))
		return exitFailure
	}
	for _, c := range codes {
		if sub == "create-admin" {
			fmt.Fprintf(stdout, "One-time administrator registration link (valid %s):\n%s\n", expires, web.InviteLink(cfg.AppURL, c.Code))
			continue
		}
		fmt.Fprintf(stdout, "Registration link: %s\n", web.InviteLink(cfg.AppURL, c.Code))
	}
	if sub == "invite" {
		for _, c := range codes {
			fmt.Fprintln(stdout, c.Code)
		}
	}
	return exitOK
}
