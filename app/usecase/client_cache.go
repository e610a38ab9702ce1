package usecase

import (
	"sync"
	"time"

	"github.com/praxis-health/praxis/domain"
)

// clientCacheTTL bounds how long a client's row is trusted without a read:
// a plan or scope change reaches new tokens within it. Revocation does not
// wait for it (see OAuth.client).
const clientCacheTTL = 30 * time.Second

// maxCachedClients bounds the cache; past it, it starts empty again.
const maxCachedClients = 10_000

type cachedClient struct {
	client domain.Client
	until  time.Time
}

// clientCache keeps recently authenticated, active clients.
type clientCache struct {
	mu      sync.Mutex
	clients map[domain.ClientID]cachedClient
}

func newClientCache() *clientCache { return &clientCache{clients: map[domain.ClientID]cachedClient{}} }

func (c *clientCache) get(id domain.ClientID, now time.Time) (domain.Client, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.clients[id]
	if !ok || !now.Before(e.until) {
		return domain.Client{}, false
	}
	return e.client, true
}

func (c *clientCache) put(client domain.Client, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.clients) >= maxCachedClients {
		clear(c.clients)
	}
	c.clients[client.ID] = cachedClient{client: client, until: now.Add(clientCacheTTL)}
}

func (c *clientCache) forget(id domain.ClientID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, cached := c.clients[id]
	delete(c.clients, id)
	return cached
}
