// Checks that recording changes neither output nor exit status, and that the JVM's
// exit never hangs: allocates on two named threads, keeps a daemon thread churning
// garbage (so allocations and deaths are in flight while the VM dies), prints, and
// leaves with System.exit(3). Used by crates/memlens/tests/java.rs.
package com.example.exit;

import java.util.ArrayList;
import java.util.List;

public class ExitCode {
    static final List<int[]> kept = new ArrayList<>();

    static volatile long churned;

    public static void main(String[] args) throws Exception {
        Thread churn = new Thread(() -> {
            while (true) {
                byte[] garbage = new byte[64 + (int) (churned & 255)];
                churned += garbage.length;
            }
        }, "memlens-churn");
        churn.setDaemon(true);
        churn.start();
        Thread worker = new Thread(() -> {
            for (int i = 0; i < 200; i++) {
                synchronized (kept) {
                    kept.add(new int[16]);
                }
            }
        }, "memlens-worker");
        worker.start();
        worker.join();
        for (int i = 0; i < 1000; i++) {
            kept.add(new int[8]);
        }
        System.gc();
        while (churned < 1_000_000) {
            Thread.sleep(1);
        }
        System.out.println("hello from java: " + kept.size());
        System.err.println("to stderr");
        System.exit(3);
    }
}
