# The boto3 cycle against Keel's S3 endpoint (test/infra/s3-clients.test.ts runs it with Debian's
# /usr/bin/python3 and boto3). Prints one JSON object of what it saw; the test asserts on it.
import json, os, sys, urllib.request
import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint = os.environ['S3_ENDPOINT']
s3 = boto3.client('s3', endpoint_url=endpoint, aws_access_key_id=os.environ['S3_KEY'], aws_secret_access_key=os.environ['S3_SECRET'],
                  region_name='us-east-1', config=Config(s3={'addressing_style': 'path'}, signature_version='s3v4', retries={'max_attempts': 1}))
out = {}
b = os.environ['S3_BUCKET']
s3.create_bucket(Bucket=b)
out['buckets'] = [x['Name'] for x in s3.list_buckets()['Buckets']]
body = b'hello from boto3\n' * 100
r = s3.put_object(Bucket=b, Key='dir/hello.txt', Body=body, ContentType='text/plain', Metadata={'colour': 'blue'})
out['put_etag'] = r['ETag']
s3.put_object(Bucket=b, Key='dir/sub/deep.txt', Body=b'deep')
s3.put_object(Bucket=b, Key='top.txt', Body=b'top')
g = s3.get_object(Bucket=b, Key='dir/hello.txt')
out['get_ok'] = g['Body'].read() == body
out['get_type'] = g['ContentType']
out['get_meta'] = g['Metadata']
rg = s3.get_object(Bucket=b, Key='dir/hello.txt', Range='bytes=6-10')
out['range'] = rg['Body'].read().decode()
out['range_status'] = rg['ResponseMetadata']['HTTPStatusCode']
h = s3.head_object(Bucket=b, Key='dir/hello.txt')
out['head_length'] = h['ContentLength']
l = s3.list_objects_v2(Bucket=b, Prefix='dir/', Delimiter='/')
out['list_keys'] = [o['Key'] for o in l.get('Contents', [])]
out['list_prefixes'] = [p['Prefix'] for p in l.get('CommonPrefixes', [])]
keys = []
kw = {'Bucket': b, 'MaxKeys': 1}
while True:
    page = s3.list_objects_v2(**kw)
    keys += [o['Key'] for o in page.get('Contents', [])]
    if not page.get('IsTruncated'):
        break
    kw['ContinuationToken'] = page['NextContinuationToken']
out['paged_keys'] = keys
# multipart: two parts of 5 MiB + a short last one
part = bytes(range(256)) * (5 * 1024 * 1024 // 256)
mp = s3.create_multipart_upload(Bucket=b, Key='big.bin', ContentType='application/x-test')
uid = mp['UploadId']
etags = []
for n, data in ((1, part), (2, part), (3, b'tail')):
    etags.append(s3.upload_part(Bucket=b, Key='big.bin', PartNumber=n, UploadId=uid, Body=data)['ETag'])
done = s3.complete_multipart_upload(Bucket=b, Key='big.bin', UploadId=uid, MultipartUpload={'Parts': [{'PartNumber': i + 1, 'ETag': e} for i, e in enumerate(etags)]})
out['mp_etag'] = done['ETag']
big = s3.get_object(Bucket=b, Key='big.bin')
out['mp_ok'] = big['Body'].read() == part + part + b'tail'
out['mp_type'] = big['ContentType']
ab = s3.create_multipart_upload(Bucket=b, Key='aborted.bin')
s3.upload_part(Bucket=b, Key='aborted.bin', PartNumber=1, UploadId=ab['UploadId'], Body=b'x')
s3.upload_part(Bucket=b, Key='aborted.bin', PartNumber=2, UploadId=ab['UploadId'], Body=b'yy')
out['list_parts'] = [(p['PartNumber'], p['Size']) for p in s3.list_parts(Bucket=b, Key='aborted.bin', UploadId=ab['UploadId'])['Parts']]
out['list_uploads'] = [(u['Key'], u['UploadId'] == ab['UploadId']) for u in s3.list_multipart_uploads(Bucket=b).get('Uploads', [])]
s3.abort_multipart_upload(Bucket=b, Key='aborted.bin', UploadId=ab['UploadId'])
# copy
s3.copy_object(Bucket=b, Key='copy.txt', CopySource={'Bucket': b, 'Key': 'top.txt'})
out['copy_ok'] = s3.get_object(Bucket=b, Key='copy.txt')['Body'].read() == b'top'
# presigned GET, fetched without boto3
url = s3.generate_presigned_url('get_object', Params={'Bucket': b, 'Key': 'dir/hello.txt'}, ExpiresIn=300)
with urllib.request.urlopen(url) as resp:
    out['presigned_ok'] = resp.read() == body
try:
    urllib.request.urlopen(url.replace('Signature=', 'Signature=0'))
    out['tampered'] = 'accepted'
except urllib.error.HTTPError as e:
    out['tampered'] = e.code
# errors
def code(fn):
    try:
        fn()
        return 'none'
    except ClientError as e:
        return e.response['Error']['Code']
out['no_key'] = code(lambda: s3.get_object(Bucket=b, Key='missing'))
out['no_bucket'] = code(lambda: s3.list_objects_v2(Bucket='no-such-bucket-here'))
out['not_empty'] = code(lambda: s3.delete_bucket(Bucket=b))
for k in ['dir/hello.txt', 'dir/sub/deep.txt']:
    s3.delete_object(Bucket=b, Key=k)
batch = s3.delete_objects(Bucket=b, Delete={'Objects': [{'Key': k} for k in ['top.txt', 'big.bin', 'copy.txt', 'never-there']]})
out['batch_deleted'] = sorted(d['Key'] for d in batch.get('Deleted', []))
out['after_delete'] = s3.list_objects_v2(Bucket=b).get('KeyCount')
s3.delete_bucket(Bucket=b)
out['buckets_after'] = [x['Name'] for x in s3.list_buckets()['Buckets']]
print(json.dumps(out))
