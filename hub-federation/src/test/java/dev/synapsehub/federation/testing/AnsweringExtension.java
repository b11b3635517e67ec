package dev.synapsehub.federation.testing;

import dev.synapsehub.net.extension.ClaimService;
import dev.synapsehub.net.extension.HubExtension;
import dev.synapsehub.net.extension.HubServices;
import dev.synapsehub.net.protocol.Request;

import java.util.function.BiConsumer;
import java.util.function.Predicate;

/** A scripted peer's extension: the frame types {@code handles} accepts go to {@code answer}, with the hub's services. */
public final class AnsweringExtension implements HubExtension {
    private final Predicate<String> handles;
    private final BiConsumer<HubServices, Request> answer;
    private HubServices hub;

    public AnsweringExtension(Predicate<String> handles, BiConsumer<HubServices, Request> answer) {
        this.handles = handles;
        this.answer = answer;
    }

    @Override
    public void bind(HubServices context, ClaimService claims) {
        hub = context;
    }

    @Override
    public boolean handles(String type) {
        return handles.test(type);
    }

    @Override
    public void handle(Request request) {
        answer.accept(hub, request);
    }
}
