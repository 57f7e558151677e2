package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/pgtest"
)

// The faults, by name. docs/reliability.md describes each as what it is.
const (
	faultKill    = "kill"    // SIGKILL a replica's process group, start it again
	faultRestart = "restart" // SIGTERM a replica: it drains, exits; start it again
	faultPause   = "pause"   // SIGSTOP a replica, then SIGCONT
	// Between the clients and one replica, at its front proxy: every
	// connection hangs (its traffic is dropped), or every connection is
	// closed and new ones are closed as soon as accepted.
	faultPartition = "partition"
	faultPGCrash   = "pgcrash"   // PostgreSQL's processes quit at once; the OS keeps their writes
	faultPowerCut  = "powercut"  // PostgreSQL quits at once and every write not fsynced is lost
	faultTerminate = "terminate" // pg_terminate_backend every client backend, repeatedly
	faultCut       = "cut"       // close every database connection at the proxy, refuse new ones
	faultLose      = "lose"      // the proxy drops the database traffic silently
	faultHold      = "hold"      // the proxy holds the database traffic, then lets it through
	faultLatency   = "latency"   // the proxy delays the database traffic
	// The proxy closes each connection that sends a create's committing
	// batch before the database's answer reaches the replica: the commit
	// happens, the replica cannot know.
	faultCommitLost = "commitlost"
)

var allFaults = []string{faultKill, faultRestart, faultPause, faultPartition, faultPGCrash, faultPowerCut,
	faultTerminate, faultCut, faultLose, faultHold, faultLatency, faultCommitLost}

// answersFault is the shortest loss or hold of the database's answers:
// longer than the store's query timeout (pgstore.QueryTimeout).
const answersFault = pgstore.QueryTimeout + 500*time.Millisecond

// nemesis injects faults one at a time, with gaps between, while the load
// runs, and logs each with its start and end.
type nemesis struct {
	h        *history.Writer
	log      func(format string, args ...any)
	faults   []string
	replicas []*replica
	proxy    *pgtest.Proxy // nil for the memory store
	pg       *postgres
	dbURL    string // direct, not through the proxy
}

// run injects faults until ctx ends; the fault under way then ends (is
// healed) before run returns. It returns the first error that left the
// system unhealed (a replica or the database that would not start).
func (n *nemesis) run(ctx context.Context) error {
	var order []string
	first := true
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second + rand.N(time.Second)):
		}
		if len(order) == 0 {
			// Every kind in each round, in a new order, and power cuts
			// twice: the fault durability is about. The first round
			// begins with one, so that a short run has one.
			order = append(order, n.faults...)
			if slices.Contains(n.faults, faultPowerCut) {
				order = append(order, faultPowerCut)
			}
			rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			if first {
				if i := slices.Index(order, faultPowerCut); i > 0 {
					order[0], order[i] = order[i], order[0]
				}
				first = false
			}
		}
		kind := order[0]
		order = order[1:]
		op := history.Op{Kind: history.Fault, Fault: kind, Invoke: n.h.Now()}
		target, err := n.inject(kind, time.Second+rand.N(2*time.Second))
		op.Target, op.Complete = target, n.h.Now()
		if err != nil {
			op.Error = err.Error()
		}
		n.h.Add(op)
		n.log("fault %-9s %-8s %5.1fs-%5.1fs %s", kind, target, float64(op.Invoke)/1e9, float64(op.Complete)/1e9, op.Error)
		if err != nil && target == "postgres" {
			return &unrecovered{fault: kind, err: err}
		}
		if err != nil {
			return fmt.Errorf("fault %s on %s: %w", kind, target, err)
		}
	}
}

// unrecovered is a database that did not start again after a fault: with
// fsync off, a power cut can leave it so. Its pets are lost to the service.
type unrecovered struct {
	fault string
	err   error
}

func (u *unrecovered) Error() string {
	return fmt.Sprintf("PostgreSQL did not start again after %s: %v", u.fault, u.err)
}

// inject plays one fault for about d, heals it, and returns its target.
// It does not stop early: a fault ends healed.
func (n *nemesis) inject(kind string, d time.Duration) (string, error) {
	// The healing must finish even when the run is interrupted meanwhile;
	// main bounds the whole run.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	switch kind {
	case faultKill, faultRestart, faultPartition, faultPause:
		return n.injectReplica(ctx, kind, d)
	case faultPGCrash, faultPowerCut, faultTerminate:
		return "postgres", n.injectDatabase(ctx, kind, d)
	case faultCut, faultLose, faultHold, faultCommitLost, faultLatency:
		return n.injectProxy(kind, d), nil
	}
	return "", fmt.Errorf("unknown fault %q", kind)
}

// injectReplica plays a fault on a replica picked at random.
func (n *nemesis) injectReplica(ctx context.Context, kind string, d time.Duration) (string, error) {
	r := n.replicas[rand.IntN(len(n.replicas))]
	switch kind {
	case faultKill:
		r.kill()
		time.Sleep(d / 2)
		return r.name, r.start(ctx)
	case faultRestart:
		r.stop()
		return r.name, r.start(ctx)
	case faultPartition:
		if rand.IntN(2) == 0 {
			r.front.Lose(pgtest.BothWays)
			time.Sleep(d)
			r.front.EndLoss()
			return r.name + "/hang", nil
		}
		r.front.Cut()
		time.Sleep(d)
		r.front.Restore()
		return r.name + "/refuse", nil
	default: // faultPause
		r.signal(syscall.SIGSTOP)
		time.Sleep(d)
		r.signal(syscall.SIGCONT)
	}
	return r.name, nil
}

// injectDatabase plays a fault on PostgreSQL itself.
func (n *nemesis) injectDatabase(ctx context.Context, kind string, d time.Duration) error {
	switch kind {
	case faultPGCrash:
		if err := n.pg.crash(ctx); err != nil {
			return err
		}
		time.Sleep(d / 2)
		return n.pg.start(ctx)
	case faultPowerCut:
		lost, err := n.pg.powerCut(ctx)
		if err != nil {
			return err
		}
		n.log("power cut: %d KiB not fsynced lost", lost>>10)
		time.Sleep(d / 2)
		return n.pg.start(ctx)
	case faultTerminate:
		// Again and again, to catch creates between their COMMIT and
		// the end of their batch.
		end := time.Now().Add(d)
		for time.Now().Before(end) {
			n.terminate(ctx)
			time.Sleep(time.Duration(50+rand.IntN(200)) * time.Millisecond)
		}
	}
	return nil
}

// injectProxy plays a fault at the proxy between the replicas and the
// database, and returns its target.
func (n *nemesis) injectProxy(kind string, d time.Duration) string {
	switch kind {
	case faultCut:
		n.proxy.Cut()
		time.Sleep(d)
		n.proxy.Restore()
		return "proxy"
	case faultLose, faultHold:
		// Both ways, briefly; or only the answers, for longer than the
		// store's query timeout, so that creates the database committed
		// end with no answer: their outcome is unknown.
		dir, target := pgtest.BothWays, "proxy"
		if rand.IntN(2) == 0 {
			dir, target, d = pgtest.Answers, "answers", answersFault+rand.N(time.Second)
		}
		if kind == faultLose {
			n.proxy.Lose(dir)
			time.Sleep(d)
			n.proxy.EndLoss()
		} else {
			n.proxy.Hold(dir)
			time.Sleep(d)
			n.proxy.Release()
		}
		return target
	case faultCommitLost:
		// Only a create's committing batch carries the pet's name (a
		// parameter), which the workload starts with this.
		n.proxy.LoseAnswersTo(namePrefix)
		time.Sleep(d)
		n.proxy.LoseAnswersTo("")
		return "proxy"
	case faultLatency:
		n.proxy.SetLatency(time.Duration(20+rand.IntN(180)) * time.Millisecond)
		time.Sleep(d)
		n.proxy.SetLatency(0)
		return "proxy"
	}
	return "proxy"
}

// terminate ends every other client session of the database.
func (n *nemesis) terminate(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.dbURL)
	if err != nil {
		return // the database is down: nothing to terminate
	}
	defer conn.Close(ctx)
	conn.Exec(ctx, `select pg_terminate_backend(pid) from pg_stat_activity
		where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`)
}
