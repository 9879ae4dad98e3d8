// Loads and links (so verifies, under -Xverify:all) every class of the given JDK modules without
// running static initialisers, to check that an instrumenting agent's rewritten classes verify.
// Usage: java -Xverify:all VerifyAll <module> [<module> ...]. Prints VERIFY FAIL / OTHER FAIL
// lines, then "VerifyAll: listed=<n> linked=<n> verify_errors=<n> other_failures=<n>"; exits 0.
// Even so, HotSpot never verifies Object, Class, String, Throwable or jdk.internal.reflect's accessors.

import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

public class VerifyAll {
    public static void main(String[] args) throws Exception {
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        ClassLoader loader = ClassLoader.getSystemClassLoader();
        int listed = 0;
        int linked = 0;
        int verifyErrors = 0;
        int otherFailures = 0;
        for (String module : args) {
            Path root = jrt.getPath("/modules", module);
            List<String> names;
            try (Stream<Path> files = Files.walk(root)) {
                names = files.map(p -> root.relativize(p).toString())
                        .filter(p -> p.endsWith(".class") && !p.equals("module-info.class"))
                        .map(p -> p.substring(0, p.length() - ".class".length()).replace('/', '.'))
                        .sorted()
                        .collect(Collectors.toList());
            }
            for (String name : names) {
                listed++;
                try {
                    // initialize=false: no static initialiser runs. HotSpot links (and so
                    // verifies) a class before answering getDeclaredMethods/Constructors.
                    Class<?> c = Class.forName(name, false, loader);
                    c.getDeclaredMethods();
                    c.getDeclaredConstructors();
                    linked++;
                } catch (Throwable t) {
                    Throwable verify = verifyCause(t);
                    if (verify != null) {
                        verifyErrors++;
                        System.out.println("VERIFY FAIL " + name + ": " + firstLine(verify.getMessage()));
                    } else {
                        otherFailures++;
                        System.out.println("OTHER FAIL " + name + ": " + t.getClass().getName());
                    }
                }
            }
        }
        System.out.println("VerifyAll: listed=" + listed + " linked=" + linked + " verify_errors=" + verifyErrors
                + " other_failures=" + otherFailures);
    }

    // HotSpot's VerifyError messages run on over several lines (frame, bytecode dump); keep one
    // line per failure.
    static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int end = message.indexOf('\n');
        return end < 0 ? message : message.substring(0, end);
    }

    // The VerifyError or ClassFormatError in t's cause chain (VerifyError is a subclass of
    // LinkageError, not of ClassFormatError, so both are checked), or null.
    static Throwable verifyCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof VerifyError || c instanceof ClassFormatError) {
                return c;
            }
        }
        return null;
    }
}
