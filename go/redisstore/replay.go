// Package redisstore keeps toolctx's replay guard and idempotency entries
// in Redis, through github.com/redis/go-redis/v9, shared with the Node,
// Python and Rust servers: the same keys, the same commands, the same
// reading of their replies, all the core's (toolctx.RedisClaimArgs,
// toolctx.RedisClaimAnswer, toolctx.IdempotencyRedisArgs,
// toolctx.IdempotencyRedisMeaning).
//
//	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
//	store, _ := redisstore.NewReplay(client, redisstore.ReplayOptions{})
//	v, _ := toolctx.NewVerifier(toolctx.Options{..., ReplayGuard: store})
package redisstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	toolctx "github.com/toolctx/toolctx/go"
)

// Doer sends one raw command: *redis.Client, *redis.ClusterClient, ...
type Doer interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// ReplayOptions of the replay store; zero values are the core's defaults.
type ReplayOptions struct {
	// Prefix of the keys (the core's default: toolctx:jti:).
	Prefix string
	// Timeout for one command: 0 the core's default (500 ms), else rounded
	// to whole milliseconds, 1 ms to 1 minute (toolctx.RedisTimeout). A
	// command is sent once, never retried: give a client with MaxRetries: -1.
	Timeout time.Duration
}

// ReplayStore is a toolctx.ReplayStore in Redis.
type ReplayStore struct {
	client  Doer
	prefix  string
	timeout time.Duration
}

// NewReplay is the replay store on client. A *redis.Client that retries commands is
// refused: a claim is sent once (a retried SET NX could read its own
// first write as a replay).
func NewReplay(client Doer, o ReplayOptions) (*ReplayStore, error) {
	timeout, err := clientTimeout(client, o.Timeout)
	if err != nil {
		return nil, err
	}
	defaults, err := toolctx.CoreReplayDefaults()
	if err != nil {
		return nil, err
	}
	s := &ReplayStore{client: client, prefix: o.Prefix, timeout: timeout}
	if s.prefix == "" {
		s.prefix = defaults.RedisKeyPrefix
	}
	return s, nil
}

// clientTimeout refuses a *redis.Client that retries commands (a command
// is sent once: a retried SET NX could read its own first write as taken)
// and reads the command timeout the user gave (the core's default, range
// and refusal).
func clientTimeout(client Doer, timeout time.Duration) (time.Duration, error) {
	if c, ok := client.(*redis.Client); ok && c.Options().MaxRetries > 0 {
		return 0, &toolctx.Error{Code: "config_invalid", Message: "the Redis client retries commands: create it with MaxRetries: -1"}
	}
	return toolctx.RedisTimeout(timeout)
}

// errTimeout: Redis did not answer in time (paused, cut off).
var errTimeout = errors.New("toolctx: redis did not answer in time")

// FirstUse claims jti with the core's command and answers the core's
// reading of the reply; a Redis that fails or does not answer in time is
// an error (the verdict is then the core's internal_error).
func (s *ReplayStore) FirstUse(ctx context.Context, jti string, until, now int64) (string, error) {
	args, err := toolctx.RedisClaimArgs(s.prefix, jti, until, now)
	if err != nil {
		return "", err
	}
	kind, value, err := send(ctx, s.client, s.timeout, args)
	if err != nil {
		return "", err
	}
	return toolctx.RedisClaimAnswer(kind, value)
}

// send runs the command, bounded by the timeout whatever the client's own
// settings (a paused Redis fails the call, it does not hold it), and names
// its reply's kind as the core reads it.
func send(ctx context.Context, client Doer, timeout time.Duration, args []string) (string, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmdArgs := make([]any, len(args))
	for i, a := range args {
		cmdArgs[i] = a
	}
	type reply struct {
		v   any
		err error
	}
	done := make(chan reply, 1)
	go func() {
		v, err := client.Do(ctx, cmdArgs...).Result()
		done <- reply{v, err}
	}()
	var r reply
	select {
	case r = <-done:
	case <-ctx.Done():
		return "", nil, errTimeout
	}
	var redisErr redis.Error
	switch v := r.v; {
	case errors.Is(r.err, redis.Nil):
		return "nil", nil, nil
	case errors.As(r.err, &redisErr):
		return "error", []byte(redisErr.Error()), nil
	case r.err != nil:
		return "", nil, r.err
	default:
		switch v := v.(type) {
		case string:
			// go-redis gives status and bulk replies alike as strings.
			return "bulk", []byte(v), nil
		case int64:
			return "integer", []byte(strconv.FormatInt(v, 10)), nil
		}
		return "other", nil, nil
	}
}

var _ toolctx.ReplayStore = (*ReplayStore)(nil)
