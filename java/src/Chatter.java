// Agent test program: writes to standard output and standard error from its first
// instruction, alternately, so that a reader of both through one pipe or one terminal sees
// the order of every write. First "out first" and "err first", then what descriptors 0, 1 and
// 2 are ("fd 1 terminal", "pipe", "file", "null", "socket": the target of /proc/self/fd/N
// without its number) and whether the JVM sees a console, then pairs of lines "out <i>" on
// standard output and "err <i>" on standard error: as many as the first argument (500 by
// default) followed by "out last" and "err last", or, with "forever", until killed (a pause
// of a millisecond every hundred pairs).

import java.nio.file.Files;
import java.nio.file.Paths;

public class Chatter {
    public static void main(String[] args) throws Exception {
        System.out.println("out first");
        System.err.println("err first");
        for (int fd = 0; fd <= 2; fd++) {
            System.out.println("fd " + fd + " " + kind(fd));
        }
        System.out.println("console " + (System.console() != null));
        boolean forever = args.length > 0 && args[0].equals("forever");
        int pairs = forever ? Integer.MAX_VALUE : args.length > 0 ? Integer.parseInt(args[0]) : 500;
        for (int i = 0; i < pairs; i++) {
            System.out.println("out " + i);
            System.err.println("err " + i);
            if (forever && i % 100 == 99) {
                Thread.sleep(1);
            }
        }
        System.out.println("out last");
        System.err.println("err last");
    }

    static String kind(int fd) {
        String target;
        try {
            target = Files.readSymbolicLink(Paths.get("/proc/self/fd/" + fd)).toString();
        } catch (Exception e) {
            return "closed";
        }
        if (target.startsWith("/dev/pts/") || target.startsWith("/dev/tty")) {
            return "terminal";
        }
        if (target.equals("/dev/null")) {
            return "null";
        }
        if (target.startsWith("pipe:")) {
            return "pipe";
        }
        if (target.startsWith("socket:")) {
            return "socket";
        }
        return "file";
    }
}
