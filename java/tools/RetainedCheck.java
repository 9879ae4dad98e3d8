// Opens an HPROF file with VisualVM's heap library and prints, for every instance,
// "<id> <shallow size> <retained size>" (ids in decimal), so the tests can compare
// `hprof analyze`'s sizes with an independent implementation. With --classes it prints instead
// the retained size of every class's instances, biggest first ("<bytes> <class>"), the work
// bench/analyze.sh times. Exits 1 with "error <message>" on a file it cannot read.

import java.io.File;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

public class RetainedCheck {
    public static void main(String[] args) {
        boolean classes = args.length == 2 && args[0].equals("--classes");
        if (args.length != 1 && !classes) {
            System.err.println("usage: RetainedCheck [--classes] FILE");
            System.exit(2);
        }
        try {
            Heap heap = HeapFactory.createHeap(new File(args[args.length - 1]));
            if (classes) {
                java.util.List<String> rows = new java.util.ArrayList<>();
                for (Object item : heap.getAllClasses()) {
                    JavaClass javaClass = (JavaClass) item;
                    rows.add(String.format("%020d %s", javaClass.getRetainedSizeByClass(), javaClass.getName()));
                }
                java.util.Collections.sort(rows, java.util.Collections.reverseOrder());
                for (String row : rows.subList(0, Math.min(20, rows.size()))) {
                    System.out.println(row.replaceFirst("^0+(?=.)", ""));
                }
                return;
            }
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
