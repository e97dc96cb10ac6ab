"""Holds the mock server and the model client to the providers' own SDKs.

Usage: check_sdks.py CHECKS.json

CHECKS.json names:
  base      the mock server, answering normally;
  refusing  {provider: base} of mock servers that answer every request with
            one of that provider's error fixtures ({"base", "status", "cause"});
  recorded  the requests the model client sent the mock (its
            `/recorded-requests`), each {method, path, headers, body};
  keys      {access key id: [secret, session token or null, region]} the
            client signed its Bedrock requests with.

Three checks, each failing the script with what differed:
  1. replies: each SDK (openai, its Azure client, anthropic, google-genai,
     boto3) calls the mock directly and through its batch API, and reads
     the answers, finish reasons, usage and batch states without complaint;
     each reads the refusing servers' errors as its own error types;
  2. requests: each request the client sent is accepted by the request
     types of the SDK of its API (OpenAI's and Anthropic's TypedDicts,
     google-genai's pydantic models, botocore's Converse input shape);
  3. signatures: each Bedrock request's Authorization equals the one
     botocore's SigV4 signer makes of the same request, time and keys.
"""

import datetime
import json
import sys
import time
import typing
import urllib.parse

import anthropic
import boto3
import botocore.auth
import botocore.awsrequest
import botocore.credentials
import botocore.exceptions
import botocore.session
import botocore.validate
import openai
import pydantic
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

PROMPT = "Translate the formula p1 & p2 into English."
failures = []


def check(what, ok, detail=""):
    """Records `what` as passed or failed."""
    print(("ok   " if ok else "FAIL ") + what + (f": {detail}" if detail and not ok else ""))
    if not ok:
        failures.append(f"{what}: {detail}")


def until(poll, done, what):
    """Polls until `done(state)`, at most ten seconds."""
    deadline = time.time() + 10
    while True:
        state = poll()
        if done(state):
            return state
        if time.time() > deadline:
            raise TimeoutError(f"{what} did not end: {state}")
        time.sleep(0.05)


# 1. Replies, as each SDK reads them.


def openai_replies(base):
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="k", max_retries=0)
    chat = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": PROMPT}], max_tokens=200
    )
    check("openai: chat completion read", bool(chat.choices[0].message.content)
          and chat.choices[0].finish_reason == "stop" and chat.usage.completion_tokens > 0, chat)
    resp = client.responses.create(
        model="o4-mini", input=PROMPT, max_output_tokens=200, reasoning={"effort": "low"}
    )
    check("openai: response read (output_text, status, usage)",
          bool(resp.output_text) and resp.status == "completed"
          and resp.usage.output_tokens_details.reasoning_tokens >= 0, resp)
    for endpoint, body in [
        ("/v1/chat/completions", {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": PROMPT}]}),
        ("/v1/responses", {"model": "o4-mini", "input": PROMPT}),
    ]:
        file_batch(client, endpoint, body, f"openai batch API ({endpoint})")


def file_batch(client, endpoint, body, what):
    """One request through a Batch API (OpenAI's, or Azure's v1 path)."""
    line = json.dumps({"custom_id": "c1", "method": "POST", "url": endpoint, "body": body})
    uploaded = client.files.create(file=("batch.jsonl", line.encode()), purpose="batch")
    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint=endpoint, completion_window="24h"
    )
    ended = until(lambda: client.batches.retrieve(batch.id),
                  lambda b: b.status in ("completed", "failed", "expired"), what)
    check(f"{what}: batch completed, counts read", ended.status == "completed"
          and ended.request_counts.completed == 1, ended)
    out = client.files.content(ended.output_file_id).text.strip().splitlines()
    result = json.loads(out[0])
    check(f"{what}: result line", result["custom_id"] == "c1"
          and result["response"]["status_code"] == 200, out)
    listed = [b.id for b in client.batches.list(limit=100)]
    check(f"{what}: listed", batch.id in listed, listed)


def azure_replies(base):
    versioned = openai.AzureOpenAI(
        azure_endpoint=base, api_key="k", api_version="2024-10-21", max_retries=0
    )
    chat = versioned.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": PROMPT}]
    )
    check("azure (api-version): chat completion on a deployment read",
          bool(chat.choices[0].message.content) and chat.model == "gpt-4o", chat)
    v1 = openai.OpenAI(base_url=f"{base}/openai/v1", api_key="k", max_retries=0)
    chat = v1.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": PROMPT}])
    check("azure (v1): chat completion read", bool(chat.choices[0].message.content), chat)
    file_batch(v1, "/chat/completions",
               {"model": "gpt-4o", "messages": [{"role": "user", "content": PROMPT}]},
               "azure batch API (v1)")


def anthropic_replies(base):
    client = anthropic.Anthropic(base_url=base, api_key="k", max_retries=0)
    msg = client.messages.create(
        model="claude-haiku-4-5", max_tokens=200, messages=[{"role": "user", "content": PROMPT}]
    )
    check("anthropic: message read", bool(msg.content[0].text) and msg.stop_reason == "end_turn", msg)
    batch = client.messages.batches.create(requests=[{
        "custom_id": "c1",
        "params": {"model": "claude-haiku-4-5", "max_tokens": 200,
                   "messages": [{"role": "user", "content": PROMPT}]},
    }])
    ended = until(lambda: client.messages.batches.retrieve(batch.id),
                  lambda b: b.processing_status == "ended", "anthropic batch")
    results = list(client.messages.batches.results(ended.id))
    check("anthropic: message batch ended, results read",
          results[0].custom_id == "c1" and results[0].result.type == "succeeded", results)


def gemini_replies(base):
    client = genai.Client(
        api_key="k", http_options=genai_types.HttpOptions(base_url=base, api_version="v1beta")
    )
    config = genai_types.GenerateContentConfig(
        max_output_tokens=200, thinking_config=genai_types.ThinkingConfig(thinking_budget=64)
    )
    r = client.models.generate_content(model="gemini-2.5-flash", contents=PROMPT, config=config)
    check("google-genai: content read (text, finish reason, usage)", bool(r.text)
          and r.candidates[0].finish_reason == genai_types.FinishReason.STOP
          and r.usage_metadata.candidates_token_count > 0, r)
    job = client.batches.create(
        model="gemini-2.5-flash",
        src=[{"contents": [{"parts": [{"text": PROMPT}], "role": "user"}], "metadata": {"key": "c1"}}],
        config={"display_name": "sdk-check"},
    )
    ended = until(lambda: client.batches.get(name=job.name),
                  lambda b: b.state.name.endswith(("SUCCEEDED", "FAILED", "EXPIRED", "CANCELLED")),
                  "gemini batch")
    inlined = ended.dest.inlined_responses
    check("google-genai: batch succeeded, inlined responses read",
          ended.state == genai_types.JobState.JOB_STATE_SUCCEEDED and bool(inlined[0].response.text)
          and inlined[0].metadata == {"key": "c1"}, ended)
    listed = [b.name for b in client.batches.list(config={"page_size": 100})]
    check("google-genai: batches listed", job.name in listed, listed)


def bedrock_client(base, region="us-east-1"):
    return boto3.client(
        "bedrock-runtime", endpoint_url=base, region_name=region,
        aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret",
        config=botocore.config.Config(retries={"max_attempts": 1}),
    )


def bedrock_replies(base):
    r = bedrock_client(base).converse(
        modelId="anthropic.claude-3-haiku-20240307-v1:0",
        messages=[{"role": "user", "content": [{"text": PROMPT}]}],
        inferenceConfig={"maxTokens": 200, "temperature": 0.1},
    )
    check("boto3: converse read (message, stopReason, usage)",
          bool(r["output"]["message"]["content"][0]["text"]) and r["stopReason"] == "end_turn"
          and r["usage"]["outputTokens"] > 0, r)


def errors_read(refusing):
    """Each SDK reads its provider's error fixtures as its own error types."""
    for provider, server in sorted(refusing.items()):
        base, status = server["base"], server["status"]
        try:
            if provider == "gemini":
                client = genai.Client(api_key="k", http_options=genai_types.HttpOptions(
                    base_url=base, api_version="v1beta"))
                client.models.generate_content(model="gemini-2.5-flash", contents=PROMPT)
            elif provider == "bedrock":
                bedrock_client(base).converse(
                    modelId="anthropic.claude-3-haiku-20240307-v1:0",
                    messages=[{"role": "user", "content": [{"text": PROMPT}]}])
            elif provider == "azure":
                openai.AzureOpenAI(azure_endpoint=base, api_key="k", api_version="2024-10-21",
                                   max_retries=0).chat.completions.create(
                    model="gpt-4o", messages=[{"role": "user", "content": PROMPT}])
            elif provider == "openai-responses":
                openai.OpenAI(base_url=f"{base}/v1", api_key="k", max_retries=0).responses.create(
                    model="o4-mini", input=PROMPT)
            else:
                raise ValueError(provider)
            check(f"{provider} error {server['name']}: raised", False, "no error")
        except genai_errors.APIError as e:
            check(f"google-genai reads {server['name']} as {type(e).__name__} {e.code} {e.status}",
                  e.code == status and bool(e.status) and bool(e.message), e)
        except botocore.exceptions.ClientError as e:
            code = e.response["Error"]["Code"]
            check(f"boto3 reads {server['name']} as {code} ({e.response['ResponseMetadata']['HTTPStatusCode']})",
                  e.response["ResponseMetadata"]["HTTPStatusCode"] == status and code.endswith("Exception")
                  and bool(e.response["Error"]["Message"]), e.response)
        except openai.APIStatusError as e:
            check(f"openai reads {server['name']} as {type(e).__name__} {e.status_code}",
                  e.status_code == status and isinstance(e.body, dict), e)


# 2. The client's requests, held to each SDK's request types.


def typed_dict_keys(typed):
    return set(typed.__required_keys__) | set(typed.__optional_keys__)


def hold_to_typed_dict(typed, body, what):
    unknown = set(body) - typed_dict_keys(typed)
    try:
        pydantic.TypeAdapter(typed).validate_python(body)
        error = None
    except pydantic.ValidationError as e:
        error = str(e)
    check(what, not unknown and error is None, f"unknown fields {sorted(unknown)}; {error}")


def hold_to_gemini(body, what):
    unknown = set(body) - {"contents", "generationConfig", "systemInstruction"}
    try:
        for content in body["contents"]:
            genai_types.Content.model_validate(content)
        genai_types.GenerationConfig.model_validate(body.get("generationConfig", {}))
        if "systemInstruction" in body:
            genai_types.Content.model_validate(body["systemInstruction"])
        error = None
    except pydantic.ValidationError as e:
        error = str(e)
    check(what, not unknown and error is None, f"unknown fields {sorted(unknown)}; {error}")


CONVERSE = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("Converse")


def hold_to_converse(model_id, body, what):
    params = dict(body, modelId=model_id)
    report = botocore.validate.ParamValidator().validate(params, CONVERSE.input_shape)
    check(what, not report.has_errors(), report.generate_report())


def requests_held(recorded):
    seen = {}
    for r in recorded:
        path = urllib.parse.urlsplit(r["path"]).path
        try:
            body = json.loads(r["body"]) if isinstance(r["body"], str) else None
        except json.JSONDecodeError:
            body = None
        if body is None:
            continue
        if path.endswith("/chat/completions"):
            kind = "chat completions"
            hold_to_typed_dict(openai.types.chat.completion_create_params.CompletionCreateParamsNonStreaming,
                               body, f"request {path} held to openai's CompletionCreateParams")
        elif path == "/v1/responses":
            kind = "responses"
            hold_to_typed_dict(openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming,
                               body, f"request {path} held to openai's ResponseCreateParams")
        elif path.endswith("/batches") and "input_file_id" in body:
            kind = "batch creation"
            if path.startswith("/openai/"):
                # Azure's v1 batches name the endpoint without `/v1`, as its
                # documentation writes them; OpenAI's type lists its own paths.
                check(f"request {path}: an Azure batch of chat completions",
                      body.get("endpoint") == "/chat/completions", body)
                body = dict(body, endpoint="/v1" + body["endpoint"])
            hold_to_typed_dict(openai.types.batch_create_params.BatchCreateParams, body,
                               f"request {path} held to openai's BatchCreateParams")
        elif path == "/v1/messages":
            kind = "messages"
            hold_to_typed_dict(anthropic.types.message_create_params.MessageCreateParamsNonStreaming,
                               body, f"request {path} held to anthropic's MessageCreateParams")
        elif path.endswith(":generateContent"):
            kind = "generateContent"
            hold_to_gemini(body, f"request {path} held to google-genai's Content and GenerationConfig")
        elif path.endswith(":batchGenerateContent"):
            kind = "batchGenerateContent"
            batch = body["batch"]
            check(f"request {path}: a batch of inlined requests with a display name",
                  set(batch) == {"displayName", "inputConfig"}, sorted(batch))
            for item in batch["inputConfig"]["requests"]["requests"]:
                hold_to_gemini(item["request"], f"inlined request of {path} held to google-genai's types")
        elif path.startswith("/model/") and path.endswith("/converse"):
            kind = "converse"
            model_id = urllib.parse.unquote(path[len("/model/"):-len("/converse")])
            hold_to_converse(model_id, body, f"request {path} held to botocore's Converse input")
        else:
            continue
        seen[kind] = seen.get(kind, 0) + 1
    print("requests held to the SDKs' types, by API:", json.dumps(seen, sort_keys=True))
    return seen


# 3. Bedrock signatures, as botocore makes them.


def botocore_authorization(r, keys, base):
    """The Authorization botocore's SigV4 signer gives the recorded request `r`."""
    ours = dict((k.lower(), v) for k, v in r["headers"])
    credential = ours["authorization"].split("Credential=")[1].split(",")[0]
    key_id, _date, region, service, _ = credential.split("/")
    secret, token, _ = keys[key_id]
    signed = ours["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
    headers = {h: ours[h] for h in signed if h not in ("host", "x-amz-date", "x-amz-security-token", "authorization")}
    request = botocore.awsrequest.AWSRequest(
        method=r["method"], url=base + r["path"], data=r["body"].encode(), headers=headers
    )
    when = datetime.datetime.strptime(ours["x-amz-date"], "%Y%m%dT%H%M%SZ")
    signer = botocore.auth.SigV4Auth(
        botocore.credentials.Credentials(key_id, secret, token), service, region
    )
    at = botocore.auth.get_current_datetime
    botocore.auth.get_current_datetime = lambda *a, **k: when
    try:
        signer.add_auth(request)
    finally:
        botocore.auth.get_current_datetime = at
    return request.headers["Authorization"], signed


def signatures_compared(recorded, keys, base):
    compared = equal = 0
    for r in recorded:
        if not r["path"].endswith("/converse"):
            continue
        ours = dict((k.lower(), v) for k, v in r["headers"])
        if not ours.get("authorization", "").startswith("AWS4-HMAC-SHA256"):
            continue
        theirs, signed = botocore_authorization(r, keys, base)
        compared += 1
        same = theirs == ours["authorization"]
        equal += same
        if not same:
            check(f"signature of {r['path']}", False, f"ours {ours['authorization']}\nbotocore {theirs}")
        for needed in ("host", "x-amz-date", "content-type"):
            if needed not in signed:
                check(f"signature of {r['path']} covers {needed}", False, signed)
    check(f"Bedrock signatures equal to botocore's SigV4: {equal} of {compared}",
          compared >= 20 and equal == compared, f"{equal} equal of {compared} compared")


def main():
    checks = json.load(open(sys.argv[1]))
    base = checks["base"]
    for read in (openai_replies, azure_replies, anthropic_replies, gemini_replies, bedrock_replies):
        try:
            read(base)
        except Exception as e:  # an SDK that complains fails its check
            check(f"{read.__name__}: the SDK read the mock without complaint", False, repr(e))
    errors_read(checks["refusing"])
    seen = requests_held(checks["recorded"])
    for api in ("chat completions", "responses", "messages", "generateContent",
                "batchGenerateContent", "converse", "batch creation"):
        check(f"requests of the client through {api} were seen", seen.get(api, 0) > 0, seen)
    signatures_compared(checks["recorded"], checks["keys"], base)
    if failures:
        print(f"\n{len(failures)} checks failed", file=sys.stderr)
        sys.exit(1)
    print("\nevery check passed")


if __name__ == "__main__":
    main()
