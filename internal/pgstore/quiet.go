package pgstore

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/jackc/pgx/v5"
)

// prepareConn is the pools' check of a pooled connection before it is
// handed out: one that is not quiet (see quiet) is destroyed and another
// one dialled. Without it, a batch sent on a connection that the server
// closed while it sat idle (a restart, a terminated session, a cut) is
// written to the socket and then fails on the read, exactly as if the
// server had committed and died: every member would be told its create
// may have been stored, when nothing was.
func prepareConn(_ context.Context, c *pgx.Conn) (bool, error) {
	nc := c.PgConn().Conn()
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	return quiet(nc), nil
}

// quietConn is the socket a quiet check peeks at.
type quietConn = net.Conn
