// Agent test program: objects made by JNI (NewObject, NewObjectArray) in a native library the
// test compiles (libjnialloc.so, see crates/agent/tests/heap_sites_fast.rs). make(1000000) returns
// 1,000,000 JniAlloc$Item in a JniAlloc$Item[1000000], all kept until the end.

public class JniAlloc {
    static final class Item {
        final int value;

        Item(int value) {
            this.value = value;
        }
    }

    static native Item[] make(int n);

    static Item[] kept;

    public static void main(String[] args) {
        System.loadLibrary("jnialloc");
        Item[] items = make(1_000_000);
        kept = items;
        long sum = 0;
        for (Item item : items) {
            sum += item.value;
        }
        System.out.println("made " + items.length + " sum " + sum);
    }
}
