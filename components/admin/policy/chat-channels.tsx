"use client";

import { useState, useTransition } from "react";
import { connectChatChannelAction, disconnectChatChannelAction } from "@/lib/admin/policy/actions";
import { useStepUp } from "@/components/step-up/step-up-field";
import { Field, SaidMessage, type Said, saidOf } from "@/components/ui/field";
import { BusyButton } from "@/components/ui/busy-button";
import { fillInFirst } from "@/lib/words";

type Provider = "slack" | "teams";

/** One provider's save and remove, with the admin's step-up for exactly where the notices would go. */
function useChannelSave(hasPasskey: boolean, provider: Provider) {
  const stepUp = useStepUp(hasPasskey);
  const [message, setMessage] = useState<Said>(null);
  const [pending, startTransition] = useTransition();

  function connect(
    fields: [label: string, value: string][],
    target: string,
    input: Parameters<typeof connectChatChannelAction>[0],
    done: () => void,
  ) {
    // Said before the step-up is asked for, not after it.
    const missing = fillInFirst(fields);
    if (missing) return setMessage({ ok: false, text: missing });
    startTransition(async () => {
      const response = await stepUp.run({ kind: "admin.chat", provider, target }, (proofId) =>
        connectChatChannelAction({ ...input, proofId }),
      );
      setMessage(saidOf(response, (data) => data.held ?? "Connected."));
      if (response.ok) done();
    });
  }

  function disconnect() {
    startTransition(async () => {
      const response = await disconnectChatChannelAction({ provider });
      setMessage(saidOf(response, () => "Disconnected: nothing more is sent there."));
    });
  }

  return { field: stepUp.field, message, pending, connect, disconnect };
}

function SlackForm({ channel, hasPasskey }: { channel: string | null; hasPasskey: boolean }) {
  const save = useChannelSave(hasPasskey, "slack");
  const [channelId, setChannelId] = useState("");
  const [token, setToken] = useState("");
  return (
    <div className="card" data-testid="slack-channel">
      <p className="muted">
        {channel
          ? `Held calls are posted to Slack channel ${channel}. The bot token is stored encrypted and is not shown; enter a channel and token to replace them.`
          : "Slack is not connected."}{" "}
        Each held call is posted once, with a button that opens its card on the desk, and the same message is updated
        when it is decided, passed to a second supervisor, expires or is withdrawn.
      </p>
      <Field
        label={"Channel id (C\u2026, from the channel's details; invite the app to the channel)"}
        name="slackChannel"
        value={channelId}
        onChange={(event) => setChannelId(event.target.value.trim())}
      />
      <Field
        label="Bot token (xoxb-…, needs the chat:write and channels:history scopes)"
        name="slackToken"
        type="password"
        autoComplete="off"
        value={token}
        onChange={(event) => setToken(event.target.value)}
      />
      {save.field}
      <BusyButton
        type="button"
        className="primary"
        busy={save.pending}
        onClick={() =>
          save.connect(
            [
              ["the channel id", channelId],
              ["the bot token", token],
            ],
            channelId,
            { provider: "slack", channel: channelId, token },
            () => setToken(""),
          )
        }
      >
        Connect Slack
      </BusyButton>{" "}
      {channel && (
        <BusyButton type="button" className="danger" busy={save.pending} onClick={save.disconnect}>
          Disconnect Slack
        </BusyButton>
      )}{" "}
      <SaidMessage said={save.message} />
    </div>
  );
}

function TeamsForm({ host, hasPasskey }: { host: string | null; hasPasskey: boolean }) {
  const save = useChannelSave(hasPasskey, "teams");
  const [url, setUrl] = useState("");
  return (
    <div className="card" data-testid="teams-channel">
      <p className="muted">
        {host
          ? `Held calls are posted to a Teams workflow at ${host}. Its URL is stored encrypted and is not shown; enter a new one to replace it.`
          : "Teams is not connected."}{" "}
        A workflow cannot change a card it posted, so each later change of the call follows as a new card.
      </p>
      <Field
        label={'Workflow webhook URL (the "When a Teams webhook request is received" trigger)'}
        name="teamsUrl"
        type="url"
        value={url}
        onChange={(event) => setUrl(event.target.value)}
        style={{ width: "100%" }}
      />
      {save.field}
      <BusyButton
        type="button"
        className="primary"
        busy={save.pending}
        onClick={() => save.connect([["the workflow URL", url]], url, { provider: "teams", url }, () => setUrl(""))}
      >
        Connect Teams
      </BusyButton>{" "}
      {host && (
        <BusyButton type="button" className="danger" busy={save.pending} onClick={save.disconnect}>
          Disconnect Teams
        </BusyButton>
      )}{" "}
      <SaidMessage said={save.message} />
    </div>
  );
}

/**
 * Where held calls are announced in chat. Connecting asks for the admin's step-up and waits for a second admin (or
 * the delay): every held call's details would go there. Disconnecting applies at once.
 */
export function ChatChannels({
  tenantName,
  channels,
  hasPasskey,
}: {
  tenantName: string;
  channels: { slack: string | null; teams: string | null };
  hasPasskey: boolean;
}) {
  return (
    <main id="main">
      <h1>Held calls in Slack and Teams for {tenantName}</h1>
      <p className="muted">
        Chat only tells people a call waits: the decision stays on the desk, behind sign-in and step-up.
      </p>
      <h2>Slack</h2>
      <SlackForm channel={channels.slack} hasPasskey={hasPasskey} />
      <h2>Microsoft Teams</h2>
      <TeamsForm host={channels.teams} hasPasskey={hasPasskey} />
    </main>
  );
}
