// Package nemesis is the chaos run's fault schedule: while the workload
// runs, it plays one fault at a time on the processes of internal/chaos/cluster
// (a replica killed, restarted, paused or cut off; PostgreSQL crashed, its
// power cut, its sessions terminated) and on the proxy between the
// replicas and the database (connections cut, traffic lost, held or
// delayed, a commit's answer lost), heals each, and records each in the
// history with its start and end. It is not the load (internal/chaos/workload)
// nor the audit (internal/check): it sends no request to the API.
package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petstore/petstore/internal/chaos/cluster"
	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/pgstore"
	"github.com/petstore/petstore/internal/pgtest"
)

// The faults, by name. docs/reliability.md describes each as what it is.
const (
	Kill    = "kill"    // SIGKILL a replica's process group, start it again
	Restart = "restart" // SIGTERM a replica: it drains, exits; start it again
	Pause   = "pause"   // SIGSTOP a replica, then SIGCONT
	// Between the clients and one replica, at its front proxy: every
	// connection hangs (its traffic is dropped), or every connection is
	// closed and new ones are closed as soon as accepted.
	Partition = "partition"
	PGCrash   = "pgcrash"   // PostgreSQL's processes quit at once; the OS keeps their writes
	PowerCut  = "powercut"  // PostgreSQL quits at once and every write not fsynced is lost
	Terminate = "terminate" // pg_terminate_backend every client backend, repeatedly
	Cut       = "cut"       // close every database connection at the proxy, refuse new ones
	Lose      = "lose"      // the proxy drops the database traffic silently
	Hold      = "hold"      // the proxy holds the database traffic, then lets it through
	Latency   = "latency"   // the proxy delays the database traffic
	// The proxy closes each connection that sends a create's committing
	// batch before the database's answer reaches the replica: the commit
	// happens, the replica cannot know.
	CommitLost = "commitlost"
)

// All is every fault, in the order -faults lists them.
var All = []string{Kill, Restart, Pause, Partition, PGCrash, PowerCut,
	Terminate, Cut, Lose, Hold, Latency, CommitLost}

// answersFault is the shortest loss or hold of the database's answers:
// longer than the store's query timeout (pgstore.QueryTimeout).
const answersFault = pgstore.QueryTimeout + 500*time.Millisecond

// Nemesis injects faults one at a time, with gaps between, while the load
// runs, and logs each with its start and end.
type Nemesis struct {
	H        *history.Writer
	Log      func(format string, args ...any)
	Faults   []string
	Replicas []*cluster.Replica
	Proxy    *pgtest.Proxy // nil for the memory store
	PG       *cluster.Postgres
	DBURL    string // direct, not through the proxy
	// Marker starts every create's name and nothing else the clients send
	// (workload.NamePrefix): commitlost loses the answers to the batches
	// that carry it.
	Marker string
}

// Run injects faults until ctx ends; the fault under way then ends (is
// healed) before run returns. It returns the first error that left the
// system unhealed (a replica or the database that would not start). With
// no faults, it waits for ctx.
func (n *Nemesis) Run(ctx context.Context) error {
	if len(n.Faults) == 0 {
		<-ctx.Done()
		return nil
	}
	s := &schedule{faults: n.Faults, shuffle: rand.Shuffle}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second + rand.N(time.Second)):
		}
		d := time.Second + rand.N(2*time.Second)
		if err := n.play(s.next(), func(kind string) (string, error) { return n.inject(kind, d) }); err != nil {
			return err
		}
	}
}

// schedule is the order of the faults: rounds in which every fault comes
// once, in a new order, and power cuts twice (the fault durability is
// about). The first round begins with a power cut, so that a short run has
// one.
type schedule struct {
	faults  []string
	shuffle func(n int, swap func(i, j int)) // rand.Shuffle
	order   []string                         // the rest of the round
	started bool
}

// next is the next fault to play; s.faults must not be empty.
func (s *schedule) next() string {
	if len(s.order) == 0 {
		s.order = append(s.order, s.faults...)
		if slices.Contains(s.faults, PowerCut) {
			s.order = append(s.order, PowerCut)
		}
		s.shuffle(len(s.order), func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
		if !s.started {
			if i := slices.Index(s.order, PowerCut); i > 0 {
				s.order[0], s.order[i] = s.order[i], s.order[0]
			}
			s.started = true
		}
	}
	kind := s.order[0]
	s.order = s.order[1:]
	return kind
}

// play plays one fault with inject, which returns its target once healed,
// and records it in the history and the log: its start, its end, its
// target and its error. A fault that left PostgreSQL down is Unrecovered;
// any other error is the fault's.
func (n *Nemesis) play(kind string, inject func(kind string) (target string, err error)) error {
	op := history.Op{Kind: history.Fault, Fault: kind, Invoke: n.H.Now()}
	target, err := inject(kind)
	op.Target, op.Complete = target, n.H.Now()
	if err != nil {
		op.Error = err.Error()
	}
	n.H.Add(op)
	n.Log("fault %-9s %-8s %5.1fs-%5.1fs %s", kind, target, float64(op.Invoke)/1e9, float64(op.Complete)/1e9, op.Error)
	if err != nil && target == "postgres" {
		return &Unrecovered{Fault: kind, Err: err}
	}
	if err != nil {
		return fmt.Errorf("fault %s on %s: %w", kind, target, err)
	}
	return nil
}

// Unrecovered is a database that did not start again after a fault: with
// fsync off, a power cut can leave it so. Its pets are lost to the service.
type Unrecovered struct {
	Fault string
	Err   error
}

func (u *Unrecovered) Error() string {
	return fmt.Sprintf("PostgreSQL did not start again after %s: %v", u.Fault, u.Err)
}

// Unwrap is the error that kept PostgreSQL down.
func (u *Unrecovered) Unwrap() error { return u.Err }

// inject plays one fault for about d, heals it, and returns its target.
// It does not stop early: a fault ends healed.
func (n *Nemesis) inject(kind string, d time.Duration) (string, error) {
	// The healing must finish even when the run is interrupted meanwhile;
	// main bounds the whole run.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	switch playsOn[kind] {
	case onReplica:
		return n.injectReplica(ctx, kind, d)
	case onDatabase:
		return "postgres", n.injectDatabase(ctx, kind, d)
	case onProxy:
		return n.injectProxy(kind, d), nil
	}
	return "", fmt.Errorf("unknown fault %q", kind)
}

// What a fault plays on: a replica picked at random, PostgreSQL, or the
// proxy between the replicas and PostgreSQL.
const (
	onReplica = iota + 1
	onDatabase
	onProxy
)

// playsOn is what each fault of All plays on.
var playsOn = map[string]int{
	Kill: onReplica, Restart: onReplica, Pause: onReplica, Partition: onReplica,
	PGCrash: onDatabase, PowerCut: onDatabase, Terminate: onDatabase,
	Cut: onProxy, Lose: onProxy, Hold: onProxy, Latency: onProxy, CommitLost: onProxy,
}

// injectReplica plays a fault on a replica picked at random.
func (n *Nemesis) injectReplica(ctx context.Context, kind string, d time.Duration) (string, error) {
	r := n.Replicas[rand.IntN(len(n.Replicas))]
	switch kind {
	case Kill:
		r.Kill()
		time.Sleep(d / 2)
		return r.Name(), r.Start(ctx)
	case Restart:
		r.Stop()
		return r.Name(), r.Start(ctx)
	case Partition:
		if rand.IntN(2) == 0 {
			r.Front().Lose(pgtest.BothWays)
			time.Sleep(d)
			r.Front().EndLoss()
			return r.Name() + "/hang", nil
		}
		r.Front().Cut()
		time.Sleep(d)
		r.Front().Restore()
		return r.Name() + "/refuse", nil
	default: // Pause
		r.Signal(syscall.SIGSTOP)
		time.Sleep(d)
		r.Signal(syscall.SIGCONT)
	}
	return r.Name(), nil
}

// injectDatabase plays a fault on PostgreSQL itself.
func (n *Nemesis) injectDatabase(ctx context.Context, kind string, d time.Duration) error {
	switch kind {
	case PGCrash:
		if err := n.PG.Crash(ctx); err != nil {
			return err
		}
		time.Sleep(d / 2)
		return n.PG.Start(ctx)
	case PowerCut:
		lost, err := n.PG.PowerCut(ctx)
		if err != nil {
			return err
		}
		n.Log("power cut: %d KiB not fsynced lost", lost>>10)
		time.Sleep(d / 2)
		return n.PG.Start(ctx)
	case Terminate:
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
func (n *Nemesis) injectProxy(kind string, d time.Duration) string {
	switch kind {
	case Cut:
		n.Proxy.Cut()
		time.Sleep(d)
		n.Proxy.Restore()
		return "proxy"
	case Lose, Hold:
		// Both ways, briefly; or only the answers, for longer than the
		// store's query timeout, so that creates the database committed
		// end with no answer: their outcome is unknown.
		dir, target := pgtest.BothWays, "proxy"
		if rand.IntN(2) == 0 {
			dir, target, d = pgtest.Answers, "answers", answersFault+rand.N(time.Second)
		}
		if kind == Lose {
			n.Proxy.Lose(dir)
			time.Sleep(d)
			n.Proxy.EndLoss()
		} else {
			n.Proxy.Hold(dir)
			time.Sleep(d)
			n.Proxy.Release()
		}
		return target
	case CommitLost:
		// Only a create's committing batch carries the pet's name (a
		// parameter), which the workload starts with the marker.
		n.Proxy.LoseAnswersTo(n.Marker)
		time.Sleep(d)
		n.Proxy.LoseAnswersTo("")
		return "proxy"
	case Latency:
		n.Proxy.SetLatency(time.Duration(20+rand.IntN(180)) * time.Millisecond)
		time.Sleep(d)
		n.Proxy.SetLatency(0)
		return "proxy"
	}
	return "proxy"
}

// terminate ends every other client session of the database.
func (n *Nemesis) terminate(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.DBURL)
	if err != nil {
		return // the database is down: nothing to terminate
	}
	defer conn.Close(ctx)
	conn.Exec(ctx, `select pg_terminate_backend(pid) from pg_stat_activity
		where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`)
}
