import java.io.File;
import java.util.*;
import org.openjdk.jmc.common.*;
import org.openjdk.jmc.common.item.*;
import org.openjdk.jmc.common.unit.*;
import org.openjdk.jmc.flightrecorder.*;
import org.openjdk.jmc.flightrecorder.jdk.*;

/**
 * Loads a recording with JDK Mission Control's own parser (what JMC opens files with), reads
 * every attribute of every event, and prints per type with events: the count, the summed
 * duration, the three most frequent top frames of events with stacks, their packages, and
 * the classes named by monitorClass or objectClass. Used by scripts/jmc-check.sh.
 */
public class JmcCheck {
    public static void main(String[] args) throws Exception {
        for (String path : args) {
            IItemCollection events = JfrLoaderToolkit.loadEvents(new File(path));
            System.out.println("== " + path);
            Map<String, long[]> counts = new TreeMap<>();
            Map<String, Map<String, Integer>> tops = new TreeMap<>();
            Map<String, Map<String, Integer>> classes = new TreeMap<>();
            Map<String, Map<String, Integer>> packages = new TreeMap<>();
            long values = 0;
            for (IItemIterable it : events) {
                IType<IItem> type = it.getType();
                String id = type.getIdentifier();
                long[] c = counts.computeIfAbsent(id, k -> new long[2]);
                IMemberAccessor<IMCStackTrace, IItem> st = JfrAttributes.EVENT_STACKTRACE.getAccessor(type);
                IMemberAccessor<IQuantity, IItem> dur = JfrAttributes.DURATION.getAccessor(type);
                IMemberAccessor<IMCType, IItem> mon = JdkAttributes.MONITOR_CLASS.getAccessor(type);
                IMemberAccessor<IMCType, IItem> obj = JdkAttributes.OBJECT_CLASS.getAccessor(type);
                for (IItem item : it) {
                    c[0]++;
                    for (IAccessorKey<?> key : type.getAccessorKeys().keySet()) {
                        Object v = type.getAccessor(key).getMember(item);
                        if (v != null) { values++; String.valueOf(v); }
                    }
                    if (st != null) {
                        IMCStackTrace s = st.getMember(item);
                        if (s != null && !s.getFrames().isEmpty()) {
                            IMCMethod m = s.getFrames().get(0).getMethod();
                            String name = m.getType().getFullName() + "." + m.getMethodName();
                            tops.computeIfAbsent(id, k -> new HashMap<>()).merge(name, 1, Integer::sum);
                            IMCPackage p = m.getType().getPackage();
                            String pkg = "package " + (p == null || p.getName() == null ? "(none)" : p.getName());
                            packages.computeIfAbsent(id, k -> new HashMap<>()).merge(pkg, 1, Integer::sum);
                        }
                    }
                    if (dur != null) c[1] += dur.getMember(item).clampedLongValueIn(UnitLookup.NANOSECOND);
                    IMemberAccessor<IMCType, IItem> cls = mon != null ? mon : obj;
                    if (cls != null && cls.getMember(item) != null)
                        classes.computeIfAbsent(id, k -> new HashMap<>()).merge(cls.getMember(item).getFullName(), 1, Integer::sum);
                }
            }
            System.out.println("values read: " + values);
            for (Map.Entry<String, long[]> e : counts.entrySet()) {
                if (e.getValue()[0] == 0) continue;
                System.out.println(e.getKey() + " count=" + e.getValue()[0] + " durationNanos=" + e.getValue()[1]);
                for (Map<String, Map<String, Integer>> m : List.of(tops, packages, classes)) {
                    Map<String, Integer> h = m.get(e.getKey());
                    if (h == null) continue;
                    h.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue()).limit(3)
                        .forEach(x -> System.out.println("    " + x.getValue() + " " + x.getKey()));
                }
            }
        }
    }
}
