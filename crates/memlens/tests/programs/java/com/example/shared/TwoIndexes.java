// Objects that live in two data structures at once: every customer is indexed both
// by id (a HashMap) and by name (a TreeMap), so the containing-data-structure
// classifier groups the customers as "Contained in multiple data structures", while
// each map's own entries and keys stay in their map. Used by crates/memlens/tests/cli/java.rs.
package com.example.shared;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

public class TwoIndexes {
    static final class Customer {
        final int id;
        final String name;
        final long[] orders = new long[4];

        Customer(int id, String name) {
            this.id = id;
            this.name = name;
        }
    }

    public static void main(String[] args) {
        int customers = args.length > 0 ? Integer.parseInt(args[0]) : 5000;
        // The JVM samples a thread's first allocations (about 512 KiB) with its
        // default interval, set before the agent loads: allocate them here, so the
        // maps below are recorded with their allocation site.
        long warmup = 0;
        for (int i = 0; i < 128; i++) {
            warmup += new byte[8192].length;
        }
        Map<Integer, Customer> byId = new HashMap<>();
        Map<String, Customer> byName = new TreeMap<>();
        for (int i = 0; i < customers; i++) {
            Customer c = new Customer(i, "customer-" + i);
            byId.put(i, c);
            byName.put(c.name, c);
            if (i % 1000 == 999) {
                System.gc();
            }
        }
        System.gc();
        System.out.println("indexed " + byId.size() + " and " + byName.size() + " after " + warmup);
    }
}
