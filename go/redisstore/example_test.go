package redisstore_test

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/toolctx/toolctx/go/redisstore"
)

// The store needs a client that sends each claim once: MaxRetries -1.
func ExampleNewReplay() {
	_, err := redisstore.NewReplay(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6390"}), redisstore.ReplayOptions{})
	fmt.Println(err)
	store, err := redisstore.NewReplay(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6390", MaxRetries: -1}), redisstore.ReplayOptions{})
	fmt.Println(store != nil, err)
	// Output:
	// toolctx: config_invalid: the Redis client retries commands: create it with MaxRetries: -1
	// true <nil>
}
