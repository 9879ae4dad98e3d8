// Opens an HPROF file with VisualVM's heap library and prints, for every instance,
// "<id> <shallow size> <retained size>" (ids in decimal), so the tests can compare
// `hprof analyze`'s sizes with an independent implementation. Exits 1 with "error <message>"
// on a file it cannot read.

import java.io.File;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;

public class RetainedCheck {
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: RetainedCheck FILE");
            System.exit(2);
        }
        try {
            Heap heap = HeapFactory.createHeap(new File(args[0]));
            StringBuilder out = new StringBuilder();
            java.util.Iterator<Instance> all = heap.getAllInstancesIterator();
            while (all.hasNext()) {
                Instance instance = all.next();
                out.append(instance.getInstanceId()).append(' ').append(instance.getSize())
                    .append(' ').append(instance.getRetainedSize()).append('\n');
            }
            System.out.print(out);
        } catch (Throwable e) {
            System.out.println("error " + e);
            System.exit(1);
        }
    }
}
