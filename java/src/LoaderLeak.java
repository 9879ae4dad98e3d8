// A class-loader leak: 40 throw-away loaders ("plugin-0" ...) each define LoaderLeak$Plugin
// (from this program's own class path, their parent the platform loader) and make one
// instance, holding 256 KB of state, kept in a static list after the loader is dropped.
// Prints "READY <pid>" and waits until its standard input closes.

import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

public class LoaderLeak {
    static final List<Object> PLUGINS = new ArrayList<>();

    public static class Plugin {
        final byte[] state = new byte[256 * 1024];
    }

    static final class PluginLoader extends URLClassLoader {
        PluginLoader(int n, URL[] urls) {
            super("plugin-" + n, urls, ClassLoader.getPlatformClassLoader());
        }
    }

    public static void main(String[] args) throws Exception {
        URL[] urls = {LoaderLeak.class.getProtectionDomain().getCodeSource().getLocation()};
        for (int n = 0; n < 40; n++) {
            PluginLoader loader = new PluginLoader(n, urls);
            Class<?> plugin = loader.loadClass("LoaderLeak$Plugin");
            PLUGINS.add(plugin.getDeclaredConstructor().newInstance());
        }
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        while (System.in.read() >= 0) {
            // Wait for the test to close standard input.
        }
    }
}
