// Opens an HPROF file with VisualVM's heap library (a third-party reader the tests use as an
// oracle) and prints what it sees: "classes <n>", "instances <n>", then one
// "class <name> <instances>" line per class. On a file it cannot read it prints "error <message>"
// and exits with status 1.

import java.io.File;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

public class VisualVmCheck {
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: VisualVmCheck FILE");
            System.exit(2);
        }
        try {
            Heap heap = HeapFactory.createHeap(new File(args[0]));
            StringBuilder lines = new StringBuilder();
            long instances = 0;
            int classes = 0;
            for (Object item : heap.getAllClasses()) {
                JavaClass javaClass = (JavaClass) item;
                classes++;
                int count = javaClass.getInstancesCount();
                instances += count;
                lines.append("class ").append(javaClass.getName()).append(' ').append(count).append('\n');
            }
            System.out.println("classes " + classes);
            System.out.println("instances " + instances);
            System.out.print(lines);
        } catch (Throwable e) {
            System.out.println("error " + e);
            System.exit(1);
        }
    }
}
