// The easyTravel leak of the AntTracks paper (section 7.2), in miniature: a location
// cache keyed by a QueryKey class that implements neither equals nor hashCode, so
// every search misses the cache and adds an entry. Used by crates/memlens/tests/java.rs.
package com.example.travel;

import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class JourneyService {
    /** The cache key: lacks equals() and hashCode(), which is the bug. */
    static final class QueryKey {
        final String text;

        QueryKey(String text) {
            this.text = text;
        }
    }

    static final class Location {
        final String name;
        final double latitude;
        final double longitude;
        final Date found;

        Location(String name, double latitude, double longitude) {
            this.name = name;
            this.latitude = latitude;
            this.longitude = longitude;
            this.found = new Date(1_600_000_000_000L);
        }
    }

    private final Map<QueryKey, List<Location>> locationCache = new HashMap<>();
    private long checksum;

    List<Location> findLocations(String query) {
        QueryKey key = new QueryKey(query);
        List<Location> cached = locationCache.get(key);
        if (cached != null) {
            return cached;
        }
        List<Location> result = search(query);
        locationCache.put(key, result);
        return result;
    }

    private List<Location> search(String query) {
        // Temporary work memory: garbage as soon as the search returns.
        byte[] scratch = new byte[2048];
        for (int i = 0; i < scratch.length; i += 64) {
            scratch[i] = (byte) (query.length() + i);
            checksum += scratch[i];
        }
        List<Location> out = new ArrayList<>(2);
        out.add(new Location(query, 48.3 + query.length(), 14.3));
        out.add(new Location(query, 47.1, 15.4 + query.length()));
        return out;
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        int requests = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        String[] queries = new String[50];
        for (int i = 0; i < queries.length; i++) {
            queries[i] = "city-" + i;
        }
        JourneyService service = new JourneyService();
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < requests; i++) {
                service.findLocations(queries[i % queries.length]);
            }
            System.gc();
        }
        System.out.println("cache entries: " + service.locationCache.size()
                + " checksum " + (service.checksum != 0));
    }
}
