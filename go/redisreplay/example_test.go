package redisreplay_test

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/toolctx/toolctx/go/redisreplay"
)

// The store needs a client that sends each claim once: MaxRetries -1.
func ExampleNew() {
	_, err := redisreplay.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6390"}), redisreplay.Options{})
	fmt.Println(err)
	store, err := redisreplay.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6390", MaxRetries: -1}), redisreplay.Options{})
	fmt.Println(store != nil, err)
	// Output:
	// toolctx: config_invalid: the Redis client retries commands: create it with MaxRetries: -1
	// true <nil>
}
