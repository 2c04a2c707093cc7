<?php
// A small Doctrine ORM application (Debian's php-doctrine-orm, entities
// mapped with attributes), run by TestDoctrineApplication after
// doctrine_app.php, on the tables that one left: through the proxy
// (t_order and t_order_item are binding tables whose keys the proxy
// generates) and directly on one MariaDB. It persists orders with their
// items (IDENTITY ids: lastInsertId), finds them again, pages a DQL query,
// pages a fetch join with the Paginator (Symfony's default), updates and
// removes through the unit of work and rolls back wrapInTransaction on an
// exception. One line per step; both runs must print the same. Ids are not
// printed.
//
// Usage: php doctrine_orm.php driver host port user password database

require_once 'Doctrine/ORM/autoload.php';
require_once 'Symfony/Component/Cache/autoload.php';

use Doctrine\Common\Collections\ArrayCollection;
use Doctrine\Common\Collections\Collection;
use Doctrine\DBAL\DriverManager;
use Doctrine\ORM\EntityManager;
use Doctrine\ORM\Mapping as ORM;
use Doctrine\ORM\ORMSetup;
use Doctrine\ORM\Tools\Pagination\Paginator;

[, $driver, $host, $port, $user, $password, $database] = $argv;

#[ORM\Entity]
#[ORM\Table(name: 't_order')]
class ShopOrder
{
    #[ORM\Id, ORM\Column(name: 'order_id', type: 'bigint'), ORM\GeneratedValue(strategy: 'IDENTITY')]
    public ?string $id = null;

    #[ORM\Column(name: 'user_id', type: 'integer')]
    public int $userId;

    #[ORM\Column(length: 16)]
    public string $status = 'new';

    #[ORM\Column(type: 'decimal', precision: 10, scale: 2, nullable: true)]
    public ?string $amount = null;

    #[ORM\Column(type: 'datetime', nullable: true)]
    public ?DateTime $created = null;

    #[ORM\Column(length: 64, nullable: true)]
    public ?string $note = null;

    /** @var Collection<int, ShopItem> */
    #[ORM\OneToMany(mappedBy: 'order', targetEntity: ShopItem::class, cascade: ['persist', 'remove'])]
    #[ORM\OrderBy(['qty' => 'ASC'])]
    public Collection $items;

    public function __construct(int $userId, string $amount)
    {
        $this->userId = $userId;
        $this->amount = $amount;
        $this->created = new DateTime('2025-01-02 03:04:05');
        $this->items = new ArrayCollection();
    }

    public function add(int $qty): void
    {
        $item = new ShopItem();
        $item->order = $this;
        $item->userId = $this->userId;
        $item->qty = $qty;
        $this->items->add($item);
    }
}

#[ORM\Entity]
#[ORM\Table(name: 't_order_item')]
class ShopItem
{
    #[ORM\Id, ORM\Column(name: 'item_id', type: 'bigint'), ORM\GeneratedValue(strategy: 'IDENTITY')]
    public ?string $id = null;

    #[ORM\ManyToOne(targetEntity: ShopOrder::class, inversedBy: 'items')]
    #[ORM\JoinColumn(name: 'order_id', referencedColumnName: 'order_id', nullable: false)]
    public ShopOrder $order;

    #[ORM\Column(name: 'user_id', type: 'integer')]
    public int $userId;

    #[ORM\Column(type: 'integer')]
    public int $qty;
}

function out(string $step, $value): void
{
    echo $step, ' | ', is_string($value) ? $value : json_encode($value, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES), "\n";
}

function step(string $name, callable $f): void
{
    try {
        out($name, $f());
    } catch (Throwable $e) {
        out($name, 'error ' . get_class($e) . ' ' . $e->getMessage());
    }
}

function show(ShopOrder $o): string
{
    return sprintf('%d %s %s %s [%s]', $o->userId, $o->status, $o->amount, $o->created?->format('Y-m-d H:i:s') ?? '-',
        implode(',', $o->items->map(fn (ShopItem $i) => $i->qty)->toArray()));
}

$config = ORMSetup::createAttributeMetadataConfiguration([__DIR__], true);
$conn = DriverManager::getConnection([
    'driver' => $driver, 'host' => $host, 'port' => (int) $port,
    'user' => $user, 'password' => $password, 'dbname' => $database, 'charset' => 'utf8mb4',
], $config);
$em = new EntityManager($conn, $config);

$ids = [];
step('persist', function () use ($em, &$ids) {
    $orders = [];
    foreach ([[11, '110.50', [1, 2]], [12, '120.25', [3]], [11, '111.00', [4, 5, 6]], [13, '130.00', []]] as [$user, $amount, $qtys]) {
        $o = new ShopOrder($user, $amount);
        foreach ($qtys as $q) {
            $o->add($q);
        }
        $em->persist($o);
        $orders[] = $o;
    }
    $em->flush();
    foreach ($orders as $o) {
        $ids[] = $o->id;
    }
    return array_map(fn ($o) => $o->id > 0 && $o->items->forAll(fn ($k, ShopItem $i) => $i->id > 0), $orders);
});
$em->clear();
step('find', fn () => show($em->find(ShopOrder::class, $ids[2])));
step('find missing', fn () => $em->find(ShopOrder::class, 424241) === null);
step('repository', fn () => array_map('show', $em->getRepository(ShopOrder::class)->findBy(['userId' => 11], ['amount' => 'DESC'])));
step('dql page', fn () => array_map('show', $em->createQuery('SELECT o FROM ShopOrder o WHERE o.userId IN (:users) ORDER BY o.amount DESC')
    ->setParameter('users', [11, 12, 13])
    ->setFirstResult(1)
    ->setMaxResults(2)
    ->getResult()));
step('dql aggregate', fn () => $em->createQuery('SELECT o.userId, COUNT(i.id) AS n, SUM(i.qty) AS qty FROM ShopOrder o LEFT JOIN o.items i WHERE o.userId IN (11, 12, 13, 14) GROUP BY o.userId ORDER BY o.userId')->getArrayResult());
// The Paginator over a fetch join, as a Symfony controller pages orders.
// Its default output walkers nest derived tables (SELECT COUNT(*) FROM
// (SELECT DISTINCT order_id_0 FROM (SELECT ...) dctrn_result) dctrn_table,
// and SELECT DISTINCT order_id_0 FROM (SELECT DISTINCT ... FROM (SELECT
// ...) dctrn_result_inner ORDER BY ...) dctrn_result LIMIT 2 OFFSET 1),
// which the proxy refuses over more than one data node (1235, the
// README's derived tables across data nodes; even for one user, whose
// orders lie in two tables): the page is counted and limited with the
// tree walkers (setUseOutputWalkers(false)) instead, COUNT(DISTINCT ...)
// and a DISTINCT id query, then the rows by id.
step('paginator', function () use ($em) {
    $query = $em->createQuery('SELECT o, i FROM ShopOrder o JOIN o.items i WHERE o.userId IN (11, 12) ORDER BY o.amount')
        ->setFirstResult(1)
        ->setMaxResults(2);
    $page = new Paginator($query);
    $page->setUseOutputWalkers(false);
    return [count($page), array_map('show', iterator_to_array($page))];
});
$em->clear();
step('update', function () use ($em, $ids) {
    $o = $em->find(ShopOrder::class, $ids[0]);
    $o->status = 'paid';
    $o->note = 'orm';
    $o->add(7);
    $em->flush();
    $em->clear();
    return show($em->find(ShopOrder::class, $ids[0]));
});
step('remove', function () use ($em, $ids) {
    $em->remove($em->find(ShopOrder::class, $ids[2]));
    $em->flush();
    return $em->getConnection()->fetchAllNumeric('SELECT COUNT(*), SUM(qty) FROM t_order_item WHERE user_id = 11');
});
step('rollback', function () use ($em) {
    try {
        $em->wrapInTransaction(function (EntityManager $em) {
            $o = new ShopOrder(14, '140.00');
            $o->add(9);
            $em->persist($o);
            $em->flush();
            throw new RuntimeException('undo');
        });
    } catch (RuntimeException $e) {
        return [$e->getMessage(), $em->getConnection()->fetchOne('SELECT COUNT(*) FROM t_order WHERE user_id = 14'), $em->isOpen()];
    }
    return 'no exception';
});
// user_id IN (...) rather than user_id > 10: a range on the INLINE sharding
// column is refused (1235) unless allow-range-query-with-inline-sharding.
step('after', fn () => $conn->fetchAllNumeric('SELECT user_id, COUNT(*), SUM(amount) FROM t_order WHERE user_id IN (11, 12, 13, 14) GROUP BY user_id ORDER BY user_id'));
