// Benchmark program: builds and keeps reachable a heap whose jcmd dump is about 1.3 GB, in
// millions of small objects, Strings, object arrays and large primitive arrays, then prints
// "READY <pid>" and waits until its standard input closes. Run with -Xmx2g or more.

package bench;

import java.util.ArrayList;
import java.util.List;

public class BigHeap {
    static final int ITEMS = 10_000_000;
    static final int STRINGS = 2_000_000;
    static final int OBJECT_ARRAYS = 200_000;
    static final int INT_ARRAYS = 4_000; // 25,000 ints each

    static final class Item {
        final int id;
        final long value;
        final Item next;
        final String name;

        Item(int id, Item next, String name) {
            this.id = id;
            this.value = id * 31L;
            this.next = next;
            this.name = name;
        }
    }

    static Object keep;

    public static void main(String[] args) throws Exception {
        List<Object> roots = new ArrayList<>();
        String[] names = {"alpha", "beta", "gamma", "delta"};
        Item[] chains = new Item[1000];
        for (int i = 0; i < ITEMS; i++) {
            int chain = i % chains.length;
            chains[chain] = new Item(i, chains[chain], names[i & 3]);
        }
        roots.add(chains);
        String[] strings = new String[STRINGS];
        for (int i = 0; i < STRINGS; i++) {
            strings[i] = "s" + i;
        }
        roots.add(strings);
        for (int i = 0; i < OBJECT_ARRAYS; i++) {
            Object[] array = new Object[20];
            for (int k = 0; k < array.length; k += 2) {
                array[k] = strings[(i * 20 + k) % STRINGS];
            }
            roots.add(array);
        }
        for (int i = 0; i < INT_ARRAYS; i++) {
            int[] array = new int[25_000];
            array[i % array.length] = i;
            roots.add(array);
        }
        keep = roots;
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) {
            // Wait until the benchmark closes our standard input.
        }
    }
}
