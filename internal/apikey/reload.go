package apikey

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/prometheus/client_golang/prometheus"
)

// Source gives the key set in force; authentication asks it on every
// request. A *Set is a Source that never changes; a *Reloader is one that
// changes when its keys file does.
type Source interface {
	Current() *Set
}

// Current returns s itself: a Set is a fixed Source.
func (s *Set) Current() *Set { return s }

// Timing of Run.
const (
	// DefaultDebounce is how long Run waits after the last change in the
	// keys file's directory before it reads the file: an editor's or an
	// orchestrator's update is several events.
	DefaultDebounce = 100 * time.Millisecond
	// DefaultMaxDelay bounds how long changes postpone a read: the file is
	// read at most this long after the first change since the last read,
	// however busy the directory is with other files.
	DefaultMaxDelay = 500 * time.Millisecond
	// PollInterval is how often Run checks that it still watches the keys
	// file's directory, and reads the file while it cannot watch it (no
	// inotify: a limit reached, an unsupported file system; the directory
	// gone).
	PollInterval = 500 * time.Millisecond
)

// Reloader holds the key set of a keys file (PETSTORE_API_KEYS_FILE) joined
// with keys fixed for the life of the process (PETSTORE_API_KEYS). Reload
// and Run re-read the file: the new set replaces the old one in one atomic
// store, so a request sees the old set or the new one, never a mix. A file
// that cannot be read or parsed changes nothing: the set in force stays, and
// one ERROR line names the file (and the line), never a key.
type Reloader struct {
	path  string
	fixed []Digest
	log   *slog.Logger
	cur   atomic.Pointer[Set]
	// Debounce is Run's quiet time after a change, and MaxDelay the most
	// that changes postpone a read; DefaultDebounce and DefaultMaxDelay
	// unless set before Run.
	Debounce, MaxDelay time.Duration

	mu sync.Mutex // serialises loads
	// seen is the SHA-256 of the content last read, loaded or refused, and
	// seenErr the read error last met: a change event that brings nothing
	// new neither reloads nor logs again.
	seen    [sha256.Size]byte
	seenErr string

	reloads  *prometheus.CounterVec
	lastLoad prometheus.Gauge
	size     prometheus.GaugeFunc
}

// The outcome label values of the reload counter.
const (
	outcomeOK    = "ok"
	outcomeError = "error"
)

// NewReloader reads the keys file at path and returns a Reloader whose set
// is its digests and fixed. An unreadable or malformed file is an error: at
// start, the server must not run with a set it was not given.
func NewReloader(path string, fixed []Digest, log *slog.Logger) (*Reloader, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Reloader{path: path, fixed: fixed, log: log, Debounce: DefaultDebounce, MaxDelay: DefaultMaxDelay}
	r.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "petstore_api_keys_reloads_total",
		Help: "Reloads of the API keys file (on SIGHUP or a change on disk), by outcome: ok, or error (the keys in force were kept).",
	}, []string{"outcome"})
	r.reloads.WithLabelValues(outcomeOK)
	r.reloads.WithLabelValues(outcomeError)
	r.lastLoad = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "petstore_api_keys_last_reload_success_timestamp_seconds",
		Help: "When the API keys file was last loaded successfully (at start or a reload), in seconds since the Unix epoch.",
	})
	r.size = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "petstore_api_keys",
		Help: "API keys in force: the keys file's and the environment's.",
	}, func() float64 { return float64(r.Current().Len()) })
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ds, err := ParseDigests(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	r.seen = sha256.Sum256(b)
	r.install(ds)
	return r, nil
}

// Current returns the set in force.
func (r *Reloader) Current() *Set { return r.cur.Load() }

// Collectors returns the reloader's metrics, for the app's registry.
func (r *Reloader) Collectors() []prometheus.Collector {
	return []prometheus.Collector{r.reloads, r.lastLoad, r.size}
}

// Reload re-reads the keys file, as SIGHUP asks, and installs its keys; on
// failure it keeps the set in force, logs one ERROR line and returns the
// error.
func (r *Reloader) Reload() error { return r.load(true) }

// load reads the file and installs its keys. Unless force, a file whose
// content (or read error) is what the last load met is left alone.
func (r *Reloader) load(force bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := os.ReadFile(r.path)
	if err != nil {
		if !force && err.Error() == r.seenErr {
			return nil
		}
		r.seen, r.seenErr = [sha256.Size]byte{}, err.Error()
		return r.refuse(err)
	}
	sum := sha256.Sum256(b)
	if !force && sum == r.seen && r.seenErr == "" {
		return nil
	}
	r.seen, r.seenErr = sum, ""
	ds, err := ParseDigests(bytes.NewReader(b))
	if err != nil {
		return r.refuse(err)
	}
	r.install(ds)
	r.reloads.WithLabelValues(outcomeOK).Inc()
	r.log.Info("API keys reloaded", slog.String("file", r.path), slog.Int("keys", r.Current().Len()))
	return nil
}

// install makes the file's digests and the fixed ones the set in force.
func (r *Reloader) install(file []Digest) {
	seen := make(map[Digest]bool, len(r.fixed)+len(file))
	var all []Digest
	for _, d := range append(append([]Digest(nil), r.fixed...), file...) {
		if !seen[d] {
			seen[d] = true
			all = append(all, d)
		}
	}
	r.cur.Store(NewSet(all...))
	r.lastLoad.Set(float64(time.Now().UnixNano()) / 1e9)
}

// refuse counts and logs a failed reload: one line, naming the file and, for
// a malformed line, its number as file:line. ParseDigests and os errors
// never quote the file's content.
func (r *Reloader) refuse(err error) error {
	attrs := []slog.Attr{slog.String("file", r.path)}
	var le *LineError
	if errors.As(err, &le) {
		err = fmt.Errorf("%s:%d: %s", r.path, le.Line, le.Reason)
		attrs = append(attrs, slog.Int("line", le.Line))
	} else {
		err = fmt.Errorf("%s: %w", r.path, err)
	}
	attrs = append(attrs, slog.String("error", err.Error()))
	r.log.LogAttrs(context.Background(), slog.LevelError, "API keys file not reloaded; the keys in force are kept", attrs...)
	r.reloads.WithLabelValues(outcomeError).Inc() // after the line: a test that sees the count sees the line
	return err
}

// Run reloads the keys file on every value from hup (SIGHUP) and whenever it
// changes on disk, until ctx ends. It watches the directory of the file, and
// of the file a symlink names, not the file: an orchestrator's update swaps
// a symlink (Kubernetes renames its ..data link), which a watch on the file
// itself would not see. Changes are debounced, but a busy directory delays a
// read by MaxDelay at most; a change that leaves the content as it was is no
// reload. Every PollInterval it checks that the directory it watches is
// still the one at the keys file's path: a directory replaced, removed and
// made again, or mounted over is watched anew and the file read. Where it
// cannot watch, it reads the file every PollInterval.
func (r *Reloader) Run(ctx context.Context, hup <-chan os.Signal) {
	d := r.newDirWatch()
	defer d.close()
	// A change between NewReloader's read and the watch is seen here.
	r.load(false)
	d.retarget()

	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	var first time.Time // the first change not read yet; zero for none
	changed := func() {
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		debounce.Reset(max(0, min(r.Debounce, first.Add(r.MaxDelay).Sub(now))))
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			r.Reload()
			d.retarget()
		case _, ok := <-d.events():
			if !ok {
				d.w = nil // closed: poll from now on
				continue
			}
			changed()
		case err, ok := <-d.errors():
			if !ok {
				d.w = nil
				continue
			}
			// An overflow may have dropped the event that matters.
			r.log.Warn("watching the API keys file", slog.String("file", r.path), slog.String("error", err.Error()))
			changed()
		case <-debounce.C:
			first = time.Time{}
			d.check() // the event may have been the directory's own removal
			r.load(false)
			d.retarget()
		case <-tick.C:
			if d.check() {
				r.load(false)
				d.retarget()
			}
		}
	}
}

// dirWatch watches the keys file's directory and, when the file is a
// symlink to another directory, that one too.
type dirWatch struct {
	r      *Reloader
	w      *fsnotify.Watcher // nil: no watching at all; Run polls
	dir    string            // the keys path's own directory
	info   os.FileInfo       // dir's, as watched; nil while not watched
	target string            // the symlink target's directory watched; "" for none
}

func (r *Reloader) newDirWatch() *dirWatch {
	d := &dirWatch{r: r, dir: filepath.Dir(r.path)}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		r.log.Warn("cannot watch the API keys file; reading it every "+PollInterval.String(), slog.String("file", r.path), slog.String("error", err.Error()))
		return d
	}
	d.w = w
	if err := d.watch(); err != nil {
		r.log.Warn("cannot watch the API keys file's directory; reading the file every "+PollInterval.String()+" until it can", slog.String("file", r.path), slog.String("error", err.Error()))
	}
	return d
}

func (d *dirWatch) close() {
	if d.w != nil {
		d.w.Close()
	}
}

// events and errors are the watcher's channels; nil (never ready) without one.
func (d *dirWatch) events() <-chan fsnotify.Event {
	if d.w == nil {
		return nil
	}
	return d.w.Events
}

func (d *dirWatch) errors() <-chan error {
	if d.w == nil {
		return nil
	}
	return d.w.Errors
}

// watch (re)places the watch on the directory at d.dir.
func (d *dirWatch) watch() error {
	d.w.Remove(d.dir) // the old directory's watch, if fsnotify still holds it
	d.info = nil
	info, err := os.Stat(d.dir)
	if err != nil {
		return err
	}
	if err := d.w.Add(d.dir); err != nil {
		return err
	}
	d.info = info
	return nil
}

// watched reports whether the directory at d.dir is the one watched:
// fsnotify drops a watch whose directory was removed, renamed or unmounted,
// and a directory mounted over another is another.
func (d *dirWatch) watched() bool {
	if d.info == nil {
		return false
	}
	now, err := os.Stat(d.dir)
	return err == nil && os.SameFile(now, d.info) && slices.Contains(d.w.WatchList(), d.dir)
}

// check makes sure the directory at d.dir is watched, and reports whether
// the file should be read now: it is not watched (or was not until now).
func (d *dirWatch) check() bool {
	if d.w == nil {
		return true
	}
	if d.watched() {
		return false
	}
	was := d.info != nil
	if err := d.watch(); err != nil {
		if was {
			d.r.log.Warn("the API keys file's directory is no longer watched; reading the file every "+PollInterval.String()+" until it is", slog.String("file", d.r.path), slog.String("error", err.Error()))
		}
		return true
	}
	d.r.log.Info("watching the API keys file's directory anew", slog.String("file", d.r.path))
	return true
}

// retarget watches the directory of the file the keys path resolves to,
// when it is not the path's own, in place of the one watched before.
func (d *dirWatch) retarget() {
	if d.w == nil {
		return
	}
	dir := ""
	if real, err := filepath.EvalSymlinks(d.r.path); err == nil {
		dir = filepath.Dir(real)
		if own, err := filepath.EvalSymlinks(d.dir); err == nil && own == dir {
			dir = ""
		}
	}
	if dir == d.target {
		return
	}
	if d.target != "" {
		d.w.Remove(d.target)
	}
	if dir != "" && d.w.Add(dir) != nil {
		dir = ""
	}
	d.target = dir
}
