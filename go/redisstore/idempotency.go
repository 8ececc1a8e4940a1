package redisstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	toolctx "github.com/toolctx/toolctx/go"
)

// IdempotencyOptions of the idempotency store; zero values are the core's.
type IdempotencyOptions struct {
	Prefix string
	// Timeout for one command: as ReplayOptions.Timeout (toolctx.RedisTimeout).
	Timeout time.Duration
}

// IdempotencyStore is a toolctx.IdempotencyStore in Redis: the core's
// commands (SET NX PX, GET, SET PX, the release script) and replies.
type IdempotencyStore struct {
	client  Doer
	prefix  string
	timeout time.Duration
	rounds  int
}

// NewIdempotency is the idempotency store on client (MaxRetries: -1).
func NewIdempotency(client Doer, o IdempotencyOptions) (*IdempotencyStore, error) {
	timeout, err := clientTimeout(client, o.Timeout)
	if err != nil {
		return nil, err
	}
	d, err := toolctx.CoreIdempotencyDefaults()
	if err != nil {
		return nil, err
	}
	// The settings table's idempotency_key_prefix ("" is not given).
	var prefix any
	if o.Prefix != "" {
		prefix = o.Prefix
	}
	s := &IdempotencyStore{client: client, timeout: timeout, rounds: d.ClaimRounds}
	if s.prefix, err = toolctx.Setting("idempotency_key_prefix", prefix); err != nil {
		return nil, err
	}
	return s, nil
}

// ask sends the core's command and answers what the core reads in the
// reply, or an error when it is none of expected.
func (s *IdempotencyStore) ask(ctx context.Context, command, key, entry string, ms int64, expected ...string) (string, []byte, error) {
	args, err := toolctx.IdempotencyRedisArgs(command, key, entry, ms)
	if err != nil {
		return "", nil, err
	}
	kind, value, err := send(ctx, s.client, s.timeout, args)
	if err != nil {
		return "", nil, err
	}
	means, err := toolctx.IdempotencyRedisMeaning(command, kind, value)
	if err != nil {
		return "", nil, err
	}
	if !slices.Contains(expected, means) {
		return "", nil, fmt.Errorf("toolctx: redis answered %s with a reply that means %s", command, means)
	}
	return means, value, nil
}

func (s *IdempotencyStore) Claim(ctx context.Context, key, entry string, leaseMs int64) (string, error) {
	k, err := toolctx.IdempotencyRedisKey(s.prefix, key)
	if err != nil {
		return "", err
	}
	for range s.rounds {
		means, _, err := s.ask(ctx, "claim", k, entry, leaseMs, "claimed", "taken")
		if err != nil {
			return "", err
		}
		if means == "claimed" {
			return "", nil
		}
		means, held, err := s.ask(ctx, "read", k, "", 0, "held", "gone")
		if err != nil {
			return "", err
		}
		if means == "held" {
			return string(held), nil
		}
	}
	return "", fmt.Errorf("toolctx: could not claim or read the key")
}

func (s *IdempotencyStore) Complete(ctx context.Context, key, entry string, ttlMs int64) error {
	k, err := toolctx.IdempotencyRedisKey(s.prefix, key)
	if err == nil {
		_, _, err = s.ask(ctx, "complete", k, entry, ttlMs, "stored")
	}
	return err
}

func (s *IdempotencyStore) Release(ctx context.Context, key, entry string) error {
	k, err := toolctx.IdempotencyRedisKey(s.prefix, key)
	if err == nil {
		_, _, err = s.ask(ctx, "release", k, entry, 0, "released", "not_held")
	}
	return err
}

var _ toolctx.IdempotencyStore = (*IdempotencyStore)(nil)
