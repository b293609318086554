// The Commons HttpClient 3.0.1 leak of the AntTracks paper (section 7.1), in
// miniature: connections are created and released in batches, but the per-host pool
// that getHostPool() puts into a map is never removed from it when its last
// connection is released. Used by crates/memlens/tests/java.rs.
package com.example.http;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

public class ConnectionManager {
    static final class HostConfiguration {
        final String host;
        final int port;

        HostConfiguration(String host, int port) {
            this.host = host;
            this.port = port;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof HostConfiguration h && h.host.equals(host) && h.port == port;
        }

        @Override
        public int hashCode() {
            return Objects.hash(host, port);
        }
    }

    static final class HostConnectionPool {
        final HostConfiguration hostConfiguration;
        final LinkedList<Connection> freeConnections = new LinkedList<>();
        final LinkedList<Thread> waitingThreads = new LinkedList<>();
        int numConnections;
        long created;
        long lastUsed;

        HostConnectionPool(HostConfiguration hostConfiguration) {
            this.hostConfiguration = hostConfiguration;
        }
    }

    static final class Connection {
        final HostConfiguration hostConfiguration;
        final byte[] buffer = new byte[4096];
        boolean open = true;

        Connection(HostConfiguration hostConfiguration) {
            this.hostConfiguration = hostConfiguration;
        }
    }

    private final Map<HostConfiguration, HostConnectionPool> mapHosts = new HashMap<>();

    synchronized HostConnectionPool getHostPool(HostConfiguration config) {
        HostConnectionPool pool = mapHosts.get(config);
        if (pool == null) {
            pool = new HostConnectionPool(config);
            pool.created = System.nanoTime();
            mapHosts.put(config, pool);
        }
        return pool;
    }

    Connection getConnection(HostConfiguration config) {
        HostConnectionPool pool = getHostPool(config);
        pool.numConnections++;
        pool.lastUsed = System.nanoTime();
        return new Connection(config);
    }

    void releaseConnection(Connection connection) {
        HostConnectionPool pool = getHostPool(connection.hostConfiguration);
        pool.numConnections--;
        connection.open = false;
        // The bug: when numConnections drops to 0 the pool stays in mapHosts.
    }

    public static void main(String[] args) {
        int batches = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        int perBatch = args.length > 1 ? Integer.parseInt(args[1]) : 1500;
        ConnectionManager manager = new ConnectionManager();
        for (int batch = 0; batch < batches; batch++) {
            List<Connection> open = new ArrayList<>();
            for (int i = 0; i < perBatch; i++) {
                open.add(manager.getConnection(new HostConfiguration("h" + batch + "." + i, 80)));
            }
            for (Connection c : open) {
                manager.releaseConnection(c);
            }
            open.clear();
            System.gc();
        }
        System.out.println("pools: " + manager.mapHosts.size());
    }
}
