package dev.synapsehub.client;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoop;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The socket transport: Linux's native epoll where its library loads, else Java NIO. Epoll
 * writes pooled direct buffers by address; NIO makes a {@code ByteBuffer} view for every write,
 * which under broadcast fan-out to thousands of sockets is most of the hub's garbage.
 */
public enum NetTransport {
    /** Linux native epoll. */
    EPOLL,
    /** Java NIO, everywhere. */
    NIO;

    /** Epoll when {@code preferNative} and it is available here, else NIO. */
    public static NetTransport choose(boolean preferNative) {
        return preferNative && Epoll.isAvailable() ? EPOLL : NIO;
    }

    /** The transport a group (or single loop) was made for: client bootstraps follow the group they are given. */
    public static NetTransport of(EventLoopGroup group) {
        return group instanceof EpollEventLoopGroup || group instanceof EpollEventLoop ? EPOLL : NIO;
    }

    /** A group of {@code threads} daemon event loops named {@code name}-N. */
    public EventLoopGroup group(int threads, String name) {
        DefaultThreadFactory factory = new DefaultThreadFactory(name, true);
        return this == EPOLL ? new EpollEventLoopGroup(threads, factory) : new NioEventLoopGroup(threads, factory);
    }

    /** The listening channel class of this transport. */
    public Class<? extends ServerChannel> serverChannel() {
        return this == EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /** The connection channel class of this transport. */
    public Class<? extends SocketChannel> socketChannel() {
        return this == EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }
}
