package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petstore/petstore/internal/chaos/lazyfs"
	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/value"
)

// Postgres restarts the throwaway cluster of .ci/with-postgres, which
// exports where it is (PG_BIN, PGDATA, PG_LOG, PG_OPTS); the run moves it
// onto a lazy filesystem for power cuts (restart with lazy).
type Postgres struct {
	bin, data, log, opts string

	backing string     // the data directory under the lazy one
	lazy    *lazyfs.FS // nil unless restarted with lazy
}

// PostgresFromEnv is the cluster that .ci/with-postgres's variables name.
func PostgresFromEnv() (*Postgres, error) {
	pg := &Postgres{bin: os.Getenv("PG_BIN"), data: os.Getenv("PGDATA"), log: os.Getenv("PG_LOG"), opts: os.Getenv("PG_OPTS")}
	if pg.bin == "" || pg.data == "" || pg.log == "" || pg.opts == "" {
		return nil, errors.New("PG_BIN, PGDATA, PG_LOG and PG_OPTS are not all set: run under .ci/with-postgres (make chaos)")
	}
	return pg, nil
}

// pgCtl runs pg_ctl as the cluster's owner: the postgres user when this
// runs as root (as .ci/with-postgres does).
func (pg *Postgres) pgCtl(ctx context.Context, args ...string) error {
	name, full := filepath.Join(pg.bin, "pg_ctl"), append([]string{"-D", pg.data}, args...)
	if os.Geteuid() == 0 {
		full = append([]string{"-u", "postgres", "--", name}, full...)
		name = "runuser"
	}
	out, err := exec.CommandContext(ctx, name, full...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %w: %s", strings.Join(args, " "), err, strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", " "))
	}
	return nil
}

// Restart stops the cluster cleanly and starts it again with fsync as
// given, on a lazy filesystem if lazy: its data directory is mounted at a
// sibling directory, where PostgreSQL runs from then on.
func (pg *Postgres) Restart(ctx context.Context, fsync, lazy bool) error {
	if err := pg.pgCtl(ctx, "-m", "fast", "-w", "stop"); err != nil {
		return err
	}
	pg.opts = setting(pg.opts, "fsync", map[bool]string{true: "on", false: "off"}[fsync])
	if lazy {
		mnt := pg.data + "-lazy"
		var st syscall.Stat_t
		if err := syscall.Stat(pg.data, &st); err != nil {
			return err
		}
		if err := os.Mkdir(mnt, 0o700); err != nil {
			return err
		}
		if err := os.Chown(mnt, int(st.Uid), int(st.Gid)); err != nil {
			return err
		}
		fs, err := lazyfs.Mount(pg.data, mnt)
		if err != nil {
			return err
		}
		pg.backing, pg.data, pg.lazy = pg.data, mnt, fs
	}
	return pg.Start(ctx)
}

// setting returns PostgreSQL's command-line options with -c name=value,
// in place of the option's value if it is there.
func setting(opts, name, value string) string {
	fields := strings.Fields(opts)
	for i, f := range fields {
		if strings.HasPrefix(f, name+"=") && i > 0 && fields[i-1] == "-c" {
			fields[i] = name + "=" + value
			return strings.Join(fields, " ")
		}
	}
	return opts + " -c " + name + "=" + value
}

// Close stops a cluster on a lazy filesystem and unmounts it, leaving the
// data directory where .ci/with-postgres made it (and removes it).
func (pg *Postgres) Close() {
	if pg.lazy == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pg.Crash(ctx)
	pg.lazy.Sync()
	if err := pg.lazy.Unmount(); err == nil {
		os.Remove(pg.data)
	}
	pg.data, pg.lazy = pg.backing, nil
}

// Crash stops the cluster at once (immediate mode: its processes quit
// without a checkpoint; the start replays the WAL). The operating system
// keeps every write they made, fsynced or not.
func (pg *Postgres) Crash(ctx context.Context) error {
	return pg.pgCtl(ctx, "-m", "immediate", "-w", "stop")
}

// PowerCut stops the cluster at once and drops every write its files did
// not fsync (the lazy filesystem's cache): what a machine losing power
// loses. It returns the bytes dropped.
func (pg *Postgres) PowerCut(ctx context.Context) (int64, error) {
	if pg.lazy == nil {
		return 0, errors.New("power cut: the cluster is not on a lazy filesystem")
	}
	if err := pg.Crash(ctx); err != nil {
		return 0, err
	}
	return pg.lazy.Drop(), nil
}

// Start starts the cluster, stopped by Crash or PowerCut.
func (pg *Postgres) Start(ctx context.Context) error {
	err := pg.pgCtl(ctx, "-l", pg.log, "-w", "-t", "60", "-o", pg.opts, "start")
	if err != nil {
		if b, rerr := os.ReadFile(pg.log); rerr == nil {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			err = fmt.Errorf("%w; the log ends: %s", err, strings.Join(lines[max(0, len(lines)-8):], " | "))
		}
	}
	return err
}

// Describe says how the cluster runs: its fsync and synchronous_commit
// settings, and whether on a lazy filesystem.
func (pg *Postgres) Describe() string {
	d := "fsync=on"
	if strings.Contains(pg.opts, "fsync=off") {
		d = "fsync=off"
	}
	if pg.lazy != nil {
		d += ", on lazyfs"
	}
	return d
}

// SyncLazy writes back everything the lazy filesystem holds, as a
// machine's page cache would have long before a power cut; it does nothing
// off a lazy filesystem.
func (pg *Postgres) SyncLazy() error {
	if pg.lazy == nil {
		return nil
	}
	return pg.lazy.Sync()
}

// ReadState reads every pet straight from the database, once no other
// session is left (a transaction of a stopped replica ends first).
func ReadState(ctx context.Context, dbURL string) ([]history.Pet, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	for {
		var others int
		if err := conn.QueryRow(ctx, `select count(*) from pg_stat_activity
			where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`).Scan(&others); err != nil {
			return nil, err
		}
		if others == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%d sessions still open: %w", others, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	// extra holds every other member, as canonical JSON (pgstore's
	// columns.go, migration 005).
	rows, err := conn.Query(ctx, `select id, name, category_id, status, extra from pets order by id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (history.Pet, error) {
		var p history.Pet
		var extra string
		if err := row.Scan(&p.ID, &p.Name, &p.CategoryID, &p.Status, &extra); err != nil {
			return p, err
		}
		if extra != "" {
			c, err := value.TextOf([]byte(extra))
			if err != nil {
				return p, fmt.Errorf("pet %d: extra %.40q: %w", p.ID, extra, err)
			}
			if string(c) != "{}" {
				p.Rest = string(c)
			}
		}
		return p, nil
	})
}
