package binlog

import (
	"context"
	"errors"

	"github.com/weirhq/weir/cdc"
)

// Status reports the pair's place in the binlog without reading it: the
// committed coordinate, the server's current one and the bytes of binlog
// between them (SHOW BINARY LOGS sizes). A saved file the server no longer
// has (purged) is reported as Lost: the pair must re-bootstrap.
func Status(ctx context.Context, cfg Config) (cdc.LogLag, error) {
	lag := cdc.LogLag{Log: "binlog"}
	r, err := open(ctx, cfg)
	if err != nil {
		return lag, err
	}
	defer r.close()
	head, err := r.srv.current(ctx, r.db)
	if err != nil {
		return lag, err
	}
	lag.Head = head.String()
	logs, err := binaryLogs(ctx, r.db)
	if err != nil {
		return lag, err
	}
	lag.Oldest = logs.oldest()
	pos, ok, err := r.position(ctx)
	if err != nil || !ok {
		return lag, err
	}
	lag.Position, lag.File = pos.String(), pos.File
	var lost *PositionLostError
	err = sameServer(pos, head)
	if err == nil {
		err = logs.retains(pos)
	}
	if errors.As(err, &lost) {
		lag.Lost, lag.Problem = true, lost.Loss()
		return lag, nil
	}
	lag.Behind, lag.Known = logs.between(pos, head)
	return lag, nil
}
