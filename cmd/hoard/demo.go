package main

import (
	"context"
	"io"

	"github.com/hoard/hoard/config"
	"github.com/hoard/hoard/demo"
	"github.com/hoard/hoard/queue"
)

// runDemo is `hoard demo` (demo.Run) on the service as this command wires
// it.
func runDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return demo.Run(ctx, args, demo.Options{Getenv: getenv, Stdout: stdout, Stderr: stderr,
		LoadConfig: func(getenv func(string) string) (config.Config, bool) { return configOrExit(getenv, stderr) },
		Open: func(ctx context.Context, cfg config.Config) (*demo.Service, func(), error) {
			a, err := openApp(ctx, cfg, botPool(cfg.NewLogger()))
			if err != nil {
				return nil, nil, err
			}
			return a.demoService(), a.close, nil
		}})
}

// demoService is this process's service as the demo drives it: the parts
// run with the demo's settings.
func (a *app) demoService() *demo.Service {
	use := func(s demo.Settings) {
		a.demo = s
		if s.Accounts != nil {
			a.clients = s.Accounts
		}
	}
	return &demo.Service{Config: a.cfg, DB: a.db, Logger: a.log, Leases: a.leases, Metrics: a.metrics, Database: a.dbDesc,
		Accounts: a.newAccountClients, ServeMetrics: a.serveMetrics,
		Serve: func(ctx context.Context, s demo.Settings, ready func(addr string)) error {
			use(s)
			return a.serve(ctx, parts{web: true, worker: true, bot: true}, ready)
		},
		StartWorker: func(ctx context.Context, s demo.Settings) (*queue.Client, error) {
			use(s)
			return a.startWorker(ctx, true, nil)
		}}
}
