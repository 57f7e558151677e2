package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// runCLI runs the program with args and an empty environment.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), append([]string{"petstore"}, args...), func(string) string { return "" }, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestHelpListsCommands(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}} {
		out, _, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("petstore %s: %v, want exit 0", strings.Join(args, " "), err)
		}
		for _, c := range []string{"serve", "keygen", "conform", "help"} {
			cmd := program.Find(c)
			if cmd == nil {
				t.Fatalf("no command %s", c)
			}
			if !regexp.MustCompile(`(?m)^  ` + c + ` +` + regexp.QuoteMeta(cmd.Summary) + `$`).MatchString(out) {
				t.Errorf("petstore %s: no line for %s with its summary:\n%s", strings.Join(args, " "), c, out)
			}
		}
		if strings.Contains(out, "-addr") {
			t.Errorf("petstore %s prints serve's flags; want the commands:\n%s", strings.Join(args, " "), out)
		}
	}
}

// Every command's -h, and help COMMAND alike, prints a description and an
// example on stdout and exits 0.
func TestCommandHelp(t *testing.T) {
	for _, c := range program.Commands {
		t.Run(c.Name, func(t *testing.T) {
			out, _, err := runCLI(t, c.Name, "-h")
			if err != nil {
				t.Fatalf("petstore %s -h: %v, want exit 0", c.Name, err)
			}
			if !strings.HasPrefix(out, "usage: petstore ") {
				t.Errorf("petstore %s -h does not start with its usage line:\n%s", c.Name, out)
			}
			// A description: a paragraph of prose after the usage line.
			paras := strings.Split(out, "\n\n")
			if len(paras) < 3 || len(strings.Fields(paras[1])) < 8 {
				t.Errorf("petstore %s -h has no description:\n%s", c.Name, out)
			}
			if !regexp.MustCompile(`(?m)^Example:\n  (\S+=\S+ )?petstore ` + c.Name).MatchString(out) {
				t.Errorf("petstore %s -h has no example running it:\n%s", c.Name, out)
			}
			via, _, err := runCLI(t, "help", c.Name)
			if err != nil || via != out {
				t.Errorf("petstore help %s: got %v and\n%s\nwant petstore %s -h's output", c.Name, err, via, c.Name)
			}
		})
	}
}

// Extra arguments are refused alike; so are unknown commands and flags,
// and a database URL pgx cannot read.
func TestCLIRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "extra"}, `serve: unexpected argument "extra" (see petstore serve -h)`},
		{[]string{"keygen", "extra"}, `keygen: unexpected argument "extra" (see petstore keygen -h)`},
		{[]string{"keygen", "-bogus"}, `keygen: flag provided but not defined: -bogus (see petstore keygen -h)`},
		{[]string{"-bogus"}, `serve: flag provided but not defined: -bogus (see petstore serve -h)`},
		{[]string{"help", "serve", "extra"}, `help: unexpected argument "extra" (see petstore help -h)`},
		{[]string{"help", "fly"}, `help: unknown command "fly" (want serve, keygen, conform, version or help)`},
		{[]string{"fly"}, `unknown command "fly" (want serve, keygen, conform, version or help; see petstore help)`},
		{[]string{"version", "extra"}, `version: unexpected argument "extra" (see petstore version -h)`},
		{[]string{"version", "-bogus"}, `version: flag provided but not defined: -bogus (see petstore version -h)`},
		// A database URL pgx cannot read, refused before serve starts; the
		// URL is not repeated, for it may hold a password.
		{[]string{"serve", "-database-url", "postgres://%zz"}, `-database-url: cannot parse: failed to parse as URL (invalid percent-encoded token: "%zz"); want a PostgreSQL URL, such as postgres://user:password@host:5432/petstore`},
		{[]string{"serve", "-database-url", "postgres://petstore:secret@db:99999/petstore"}, `-database-url: cannot parse: invalid port; want a PostgreSQL URL, such as postgres://user:password@host:5432/petstore`},
	} {
		out, errOut, err := runCLI(t, tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("petstore %s: got error %v, want %q", strings.Join(tc.args, " "), err, tc.want)
		}
		if got := exitStatus(err); got != exitUsage {
			t.Errorf("petstore %s: exit status %d, want %d (a usage error)", strings.Join(tc.args, " "), got, exitUsage)
		}
		if out != "" || errOut != "" {
			t.Errorf("petstore %s printed %q %q; want only the error line", strings.Join(tc.args, " "), out, errOut)
		}
	}
}

// -h must not print a value taken from the environment: it may be a key.
func TestHelpHidesEnvironment(t *testing.T) {
	var out bytes.Buffer
	env := map[string]string{"PETSTORE_API_KEYS": "secret-key-0123456789abcdef0123456789", "PETSTORE_DATABASE_URL": "postgres://u:secret-pw@db/x"}
	if err := run(context.Background(), []string{"petstore", "serve", "-h"}, func(k string) string { return env[k] }, &out, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "secret") {
		t.Errorf("serve -h prints a value from the environment:\n%s", out.String())
	}
}
