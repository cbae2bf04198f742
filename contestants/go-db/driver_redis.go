package main

// go-redis v9, the Redis client Go teams use (the Redis project's own), with
// its connection pool: one pipeline per request, `HMGET item:<a> name price`
// and, for a different id, `HMGET item:<b> name price`, sent together in one
// round trip (the Rust reference's `redis` driver does the same).

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

type redisFetcher struct{ client *redis.Client }

func openRedis(ctx context.Context, url string, size int) (Fetcher, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL is not a Redis URL (%v); write redis://HOST:6379/0", err)
	}
	opts.PoolSize = size
	opts.DialTimeout = connectTimeout
	opts.PoolTimeout = fetchTimeout
	// Without this go-redis bounds a command by its own read/write timeouts
	// (3 s) and not by the request's deadline.
	opts.ContextTimeoutEnabled = true
	client := redis.NewClient(opts)
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, err
	}
	return &redisFetcher{client}, nil
}

func (f *redisFetcher) Fetch(ctx context.Context, lo, hi int32) ([]Item, error) {
	ids := []int32{lo, hi}
	if lo == hi {
		ids = ids[:1]
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	_, err := f.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, redisKey(id), "name", "price")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	items := make([]Item, 0, 2)
	for i, id := range ids {
		it, ok, err := itemFromHash(id, cmds[i].Val())
		if err != nil {
			return nil, err
		}
		if ok {
			items = append(items, it)
		}
	}
	return items, nil
}

func (f *redisFetcher) Close() { f.client.Close() }

// redisKey is the data set's key of a row: hash item:<id> with fields name
// and price (docs/scenarios.md).
func redisKey(id int32) string { return "item:" + strconv.FormatInt(int64(id), 10) }

// itemFromHash reads HMGET's answer for name and price: both nil is a missing
// row (ok false), one nil or a price that is not an int32 is an error.
func itemFromHash(id int32, fields []any) (Item, bool, error) {
	if len(fields) != 2 {
		return Item{}, false, fmt.Errorf("HMGET %s answered %d fields, want 2", redisKey(id), len(fields))
	}
	if fields[0] == nil && fields[1] == nil {
		return Item{}, false, nil
	}
	name, okName := fields[0].(string)
	price, okPrice := fields[1].(string)
	if !okName || !okPrice {
		return Item{}, false, fmt.Errorf("hash %s lacks name or price", redisKey(id))
	}
	p, err := strconv.ParseInt(price, 10, 32)
	if err != nil {
		return Item{}, false, fmt.Errorf("hash %s has price %q, not an integer", redisKey(id), price)
	}
	return Item{ID: id, Name: name, Price: int32(p)}, true, nil
}
